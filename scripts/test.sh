#!/usr/bin/env bash
# Set up, check that every C++ file is clang-formatted (scripts/check_format.sh), build, and run
# the whole test suite; then the same suite built by clang with AddressSanitizer and UBSan
# (build-asan, scripts/sanitize-build.sh), then each fuzzer, built in that same folder, for a short
# while (scripts/fuzz.sh; 30 s each, or SERVESIM_FUZZ_SECONDS). Any sanitizer report or fuzzer
# finding fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/check_format.sh
source scripts/ccache.sh
# Zero warnings: the normal (g++) build treats them as errors here.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSERVESIM_BUILD_TESTS=ON \
  -DSERVESIM_PYTHON=AUTO -DSERVESIM_WERROR=ON "${SERVESIM_LAUNCHER[@]}" >/dev/null
cmake --build build
# python_pip_install's build (setup.py) takes the same flag, so it reuses build/'s objects.
SERVESIM_CMAKE_ARGS=-DSERVESIM_WERROR=ON ctest --test-dir build --output-on-failure -j2
source scripts/sanitize-build.sh
cmake --build "$SERVESIM_SAN_BUILD"
ctest --test-dir "$SERVESIM_SAN_BUILD" --output-on-failure -j2
bash scripts/fuzz.sh "${SERVESIM_FUZZ_SECONDS:-30}"
