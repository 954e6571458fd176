#!/usr/bin/env bash
# Set up, build, and run the default scenario (results in servesim-out/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/ccache.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${SERVESIM_LAUNCHER[@]}" >/dev/null
cmake --build build
./build/servesim run --out servesim-out
