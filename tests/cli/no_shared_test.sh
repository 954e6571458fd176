#!/usr/bin/env bash
# A fresh clone runs every shipped config: the repository's files (git ls-files: what a clone
# has, plus files not yet committed that git does not ignore) are copied into a temporary folder
# with no ../shared beside it, and every example and reproduction (servesim run) and every sweep
# (servesim size) must succeed there. Runs are cut short (--max-sim-time, fewer requests for the
# sweeps) to keep the test near a minute on two cores: what is checked is that each config
# finds and reads its data, not its figures (scripts/golden.py checks those).
# usage: no_shared_test.sh SERVESIM SOURCE_DIR WORKDIR
# Exits 77 (skipped) where SOURCE_DIR is not a git checkout.
set -uo pipefail
bin="$1"; src="$2"; w="$3"
rm -rf "$w"; mkdir -p "$w/clone" "$w/out"
if ! git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "skipped: $src is not a git checkout"; exit 77
fi
# Files of the checkout that exist (a deleted but not yet committed file is left out).
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [[ -f "$f" ]] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | (cd "$w/clone" && tar -xf -)
[[ -e "$w/shared" ]] && { echo "FAIL: $w/shared exists"; exit 1; }
repo="$w/clone"
[[ -d "$repo/data/timings/aiconfigurator" ]] || { echo "FAIL: no data/ in the copy"; exit 1; }
ran=0; fail=0
check() {  # name, log, command...
  local name="$1" log="$2"; shift 2
  if timeout 120 "$@" >"$log" 2>&1; then
    ran=$((ran + 1))
  else
    echo "FAIL: $name: $(tail -n 3 "$log")"
    fail=1
  fi
}
cd "$repo" || exit 1
for cfg in configs/examples/*.yaml configs/reproductions/*.yaml; do
  name="${cfg%.yaml}"; out="$w/out/${name//\//-}"
  check "$name" "$out.log" "$bin" run "$cfg" --out "$out" --quiet --max-sim-time 20
done
for cfg in bench/configs/*.yaml; do
  name="${cfg%.yaml}"; out="$w/out/${name//\//-}"
  check "$name" "$out.log" "$bin" run "$cfg" --out "$out" --quiet --max-sim-time 5
done
for cfg in configs/sweeps/*.yaml; do
  name="${cfg%.yaml}"; out="$w/out/${name//\//-}"
  sets=()
  grep -q '^  synthetic:' "$(dirname "$cfg")/$(sed -n 's/^base: //p' "$cfg")" &&
    sets=(--set workload.synthetic.requests=60)
  check "$name" "$out.log" "$bin" size "$cfg" --out "$out" --quiet "${sets[@]}"
done
# The README's calibrate command, on the gzipped Splitwise table named as the plain CSV.
check "calibrate splitwise" "$w/out/calibrate.log" "$bin" calibrate \
  data/timings/splitwise/perf_model.csv --source-model llama2-70b --source-hardware h100-80gb --source-tp 4 \
  --out "$w/out/calibrated"
# Nothing the runs wrote names ../shared.
if grep -rl "shared/data" "$w/out" >/dev/null 2>&1; then
  echo "FAIL: an output names shared/data: $(grep -rl 'shared/data' "$w/out" | head -3)"
  fail=1
fi
echo "no-shared: $ran commands ran in a copy without ../shared"
exit $fail
