#!/usr/bin/env bash
# ctest (only in builds with MPI, tests/CMakeLists.txt): `servesim size` under mpirun with NP
# ranks writes the same files, byte for byte, as a single-process --jobs 1 run, and only rank 0
# writes. Usage: size_mpi_test.sh SERVESIM MPIEXEC NP SWEEP.yaml [flag|env]
# Open MPI's mpirun refuses to start as root (containers, CI) unless told, in either of the two
# ways docs/sizing.md#mpi gives: `flag` (the default) passes --allow-run-as-root, `env` sets
# OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.
set -euo pipefail
bin=$1 mpiexec=$2 np=$3 sweep=$4 how=${5:-flag}
root_flag=(--allow-run-as-root)
if [[ $how == env ]]; then
  root_flag=()
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" size "$sweep" --out "$work/single" --jobs 1 --quiet
# OpenMPI's own start-up allocations are never freed (LeakSanitizer reports them from libmpi and
# its plugins in a sanitizer build), so leak checking is off for the ranks only; the --jobs 1 run
# above runs the same sweep code with it on.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  "$mpiexec" "${root_flag[@]}" --oversubscribe -np "$np" \
  "$bin" size "$sweep" --out "$work/mpi" --jobs 1 --quiet
for f in points.csv summary.json; do
  cmp "$work/single/$f" "$work/mpi/$f"
done
# Nothing else was written: two result folders of two files each.
[[ $(find "$work" -type f | wc -l) -eq 4 ]] || { find "$work" -type f >&2; exit 1; }
echo "mpirun -np $np: points.csv and summary.json identical to --jobs 1"
