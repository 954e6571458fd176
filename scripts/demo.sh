#!/usr/bin/env bash
# Set up, build the servesim command (only it: scripts/test.sh builds the test suite and the
# Python module), and run the default scenario (results in servesim-out/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --build
source scripts/ccache.sh
echo "configuring build/ (Release)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSERVESIM_BUILD_TESTS=OFF \
  -DSERVESIM_PYTHON=OFF "${SERVESIM_LAUNCHER[@]}" >/dev/null
echo "building the servesim command only (scripts/test.sh builds the tests and the Python module)"
cmake --build build --target servesim
./build/servesim run --out servesim-out
