#!/usr/bin/env bash
# Installs what servesim needs on Debian 12, as root. Skips apt-get entirely when everything is
# already installed.
#   scripts/install-deps.sh           everything: the build, the test suite, the sanitizer build
#                                     and fuzzers, the Python module, MPI, the report's browser test
#   scripts/install-deps.sh --build   only what building the servesim command needs (the demo)
set -euo pipefail
build_pkgs=(cmake ninja-build g++ libboost-program-options-dev libboost-graph-dev libyaml-cpp-dev
            libspdlog-dev libfmt-dev nlohmann-json3-dev libeigen3-dev
            zlib1g-dev  # gzip-compressed tables in data/ (core/input_file.cpp)
            ccache)  # compiler cache: a second build of the same sources (CI after a session) takes minutes
test_pkgs=(catch2 clang libclang-rt-14-dev python3
           clang-format  # scripts/check_format.sh: the layout every .cpp/.h must have
           pybind11-dev python3-dev python3-numpy  # the Python module (python/, docs/python.md)
           python3-pip python3-venv  # `pip install .` into a fresh venv (tests/python/)
           openmpi-bin libopenmpi-dev  # MPI: optional (CMake SERVESIM_MPI), for `servesim size` over ranks
           chromium)  # headless, for the report's browser test (tests/report/browser_test.sh)
pkgs=("${build_pkgs[@]}")
[[ "${1:-}" == "--build" ]] || pkgs+=("${test_pkgs[@]}")
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
