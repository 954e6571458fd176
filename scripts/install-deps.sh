#!/usr/bin/env bash
# Installs what servesim needs to build and test on Debian 12, as root. Skips apt-get entirely
# when everything is already installed.
set -euo pipefail
pkgs=(cmake ninja-build g++ libboost-program-options-dev libboost-graph-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
      nlohmann-json3-dev libeigen3-dev catch2 clang libclang-rt-14-dev python3
      zlib1g-dev  # the large tables in data/ are stored gzipped (core/input_file.h)
      clang-format  # scripts/check_format.sh: the layout every .cpp/.h must have
      ccache  # compiler cache: a second build of the same sources (CI after a session) takes minutes
      pybind11-dev python3-dev python3-numpy  # the Python module (python/, docs/python.md)
      openmpi-bin libopenmpi-dev  # MPI: optional (CMake SERVESIM_MPI), for `servesim size` over ranks
      chromium)  # headless, for the report's browser test (tests/report/browser_test.sh)
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
