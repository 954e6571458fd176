#!/usr/bin/env bash
# Lines of the Catch2 suite's library files (scripts/mutate.py's default files) that
# servesim_tests never runs, one `file:line: text` a line under a per-file summary (lines, run,
# never run): a mutant on such a line survives for sure. Not run by CI; docs/testing.md
# ("Sixth round (models)") says when to use it.
#
#   bash scripts/coverage.sh [OUT] [coverage.py options]   # OUT: default build-cov/coverage/never_run.txt
#
# Configures build-cov (Debug, -O0, --coverage, libraries file by file so gcov maps lines to
# their own file, the suite in batches) unless it is there, builds servesim_tests alone at -j1,
# runs it and reads the counters with gcc's gcov; scripts/coverage.py does the work (it also
# writes branch figures: build-cov/coverage/uncovered.txt and summary.json).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build-cov/coverage/never_run.txt}"
shift || true
source scripts/ccache.sh
if [[ ! -f build-cov/build.ninja ]]; then
  cmake -S . -B build-cov -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="--coverage -O0" \
    -DSERVESIM_BUILD_TESTS=ON -DSERVESIM_PYTHON=OFF -DSERVESIM_MPI=OFF -DSERVESIM_UNITY=OFF \
    -DSERVESIM_TESTS_UNITY=ON "${SERVESIM_LAUNCHER[@]}" >/dev/null
fi
nice ninja -C build-cov -j1 servesim_tests
mkdir -p "$(dirname "$out")"
python3 scripts/coverage.py --build build-cov --no-build --never-run "$out" "$@"
