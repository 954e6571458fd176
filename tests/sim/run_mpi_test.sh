#!/usr/bin/env bash
# ctest run_mpi (tests/CMakeLists.txt): `servesim run` over MPI ranks (docs/cluster.md#parallel).
# With MPI compiled in and an mpirun: `mpirun -n 2 servesim run --threads T` writes the
# sequential engine's summary.json byte for byte (T = 1 and 2), only rank 0 writes, and a run
# that needs the run's order (requests.csv) goes to rank 0 alone, said so, with the same files.
# Without MPI compiled in: a process that an MPI launcher says is one of several is refused
# (exit 2); the mpirun part is skipped (exit 77).
# Usage: run_mpi_test.sh SERVESIM CONFIG.yaml MPIEXEC|none WITH_MPI(ON|OFF)
set -euo pipefail
bin=$1 config=$2 mpiexec=$3 with_mpi=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A small fleet: 6 replicas, a few seconds of traffic at the daily curve's peak.
sets=(--set cluster.replicas=6 --set workload.synthetic.requests=300
      --set workload.synthetic.arrival.mean_rate_per_s=40 --set workload.synthetic.start_s=50000)
"$bin" run "$config" "${sets[@]}" --out "$work/seq" -q
# A launch of 2 ranks that must be refused: exit 2, the message holds WHAT, nothing written.
# Usage: refused WHAT [VAR=VALUE...]
refused() {
  local what=$1 rc
  shift
  set +e
  env OMPI_COMM_WORLD_SIZE=2 "$@" "$bin" run "$config" "${sets[@]}" --out "$work/refused" -q \
    2>"$work/err"
  rc=$?
  set -e
  [[ $rc -eq 2 ]] || { echo "expected exit 2 ($what), got $rc" >&2; exit 1; }
  grep -qF "$what" "$work/err" || { cat "$work/err" >&2; exit 1; }
  [[ ! -e $work/refused ]] || { echo "a refused run wrote $work/refused" >&2; exit 1; }
  rm "$work/err"
}
if [[ $with_mpi != ON ]]; then
  refused "built without MPI"
  echo "no MPI compiled in: a launch of 2 ranks is refused; the mpirun part is skipped"
  exit 77
fi
# Built with MPI, a launch of several ranks loads the MPI plugin: one that is not where
# SERVESIM_MPI_PLUGIN says is refused with the path, before anything is written.
refused "$work/none.so: no such file" SERVESIM_MPI_PLUGIN="$work/none.so"
if [[ $mpiexec == none || ! -x $mpiexec ]]; then
  echo "MPI compiled in but no mpirun found: skipped"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=("$mpiexec" --oversubscribe -n 2)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"  # OpenMPI's own start-up
for t in 1 2; do
  "${mpi[@]}" "$bin" run "$config" "${sets[@]}" --out "$work/mpi$t" --threads $t -q \
    --no-requests-csv
  cmp "$work/seq/summary.json" "$work/mpi$t/summary.json"
done
# requests.csv is written in the run's order: rank 0 runs it alone, and says so.
"${mpi[@]}" "$bin" run "$config" "${sets[@]}" --out "$work/alone" --threads 1 -q 2>"$work/err"
grep -q "on rank 0 alone" "$work/err" || { cat "$work/err" >&2; exit 1; }
cmp "$work/seq/summary.json" "$work/alone/summary.json"
cmp "$work/seq/requests.csv" "$work/alone/requests.csv"
# Nothing else was written: seq and alone with two files each, mpi1 and mpi2 with one.
[[ $(find "$work" -type f ! -name err | wc -l) -eq 6 ]] || { find "$work" -type f >&2; exit 1; }
echo "mpirun -n 2 (1 and 2 threads a rank): summary.json identical to the sequential engine's"
