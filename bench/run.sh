#!/usr/bin/env bash
# Set up, build (Release, without tests), and run the whole-run benchmarks; arguments go to
# bench/run.py (--quick, --full, --repeat N). Prints figures only; docs/performance.md has them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSERVESIM_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench --target servesim
python3 bench/run.py --servesim build-bench/servesim "$@"
