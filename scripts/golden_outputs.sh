#!/usr/bin/env bash
# Refactoring guard: run every example config, the benchmark scenarios, the default scenario
# and the small sizing sweep with one servesim binary and keep every result file, so that a
# refactor can be checked for byte-identical output against the tree before it.
#
#   bash scripts/golden_outputs.sh BINARY OUTDIR          # write results
#   bash scripts/golden_outputs.sh --compare DIR_A DIR_B  # cmp every file; exit 1 on a difference
#
# Each run writes summary.json, requests.csv, steps.csv and timeline.json (--steps --timeline).
# The examples run with --max-sim-time 600 so the whole set takes a few minutes; that limit is the
# same on both sides, so the comparison still covers every code path the configs reach.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

if [[ "${1:-}" == "--compare" ]]; then
  a="$2"; b="$3"; bad=0; n=0
  while IFS= read -r f; do
    n=$((n + 1))
    if [[ ! -f "$b/$f" ]]; then echo "only in $a: $f"; bad=1; continue; fi
    if ! cmp -s "$a/$f" "$b/$f"; then echo "differs: $f"; bad=1; fi
  done < <(cd "$a" && find . -type f | sort)
  while IFS= read -r f; do
    [[ -f "$a/$f" ]] || { echo "only in $b: $f"; bad=1; }
  done < <(cd "$b" && find . -type f | sort)
  echo "compared $n files: $([[ $bad == 0 ]] && echo identical || echo DIFFERENT)"
  exit $bad
fi

bin="$(realpath "$1")"; out="$2"
mkdir -p "$out"; out="$(realpath "$out")"
cd "$root"
run() {  # name, then servesim arguments
  local name="$1"; shift
  if ! "$bin" "$@" >"$out/$name.stdout" 2>"$out/$name.stderr"; then
    echo "$name: exit $?" >>"$out/failures.txt"
  fi
  # the stderr of a run holds wall-clock progress; keep only its exit status
  rm -f "$out/$name.stderr"
}
common=(-q --no-progress --steps --timeline --max-sim-time 600)
run default run "${common[@]}" --out "$out/default"
for cfg in configs/examples/*.yaml bench/configs/*.yaml; do
  name="$(basename "$(dirname "$cfg")")-$(basename "$cfg" .yaml)"
  run "$name" run "$cfg" "${common[@]}" --out "$out/$name"
done
run sweep-small size configs/sweeps/sizing-small.yaml -q --out "$out/sweep-small"
# wall-clock fields are the only nondeterministic output; drop them before comparing
find "$out" -name '*.json' -print0 | xargs -0 -r sed -i -E '/"(wall|elapsed)[a-z_]*":/d'
find "$out" -name '*.stdout' -print0 | xargs -0 -r sed -i -E '/wall|elapsed|[0-9.]+ ?ms of wall/d'
echo "wrote $(find "$out" -type f | wc -l) files under $out"
