#!/usr/bin/env bash
# Every example config (configs/examples/*.yaml) and reproduction kit (configs/reproductions/)
# runs to completion with exit 0 and writes summary.json. A config that reads the real data
# beside the checkout (../shared/data) is skipped, and counted, where that folder is absent.
# usage: examples_test.sh SERVESIM SOURCE_DIR WORKDIR
set -uo pipefail
bin="$1"; src="$2"; w="$3"
rm -rf "$w"; mkdir -p "$w"
ran=0; skipped=0; fail=0
for cfg in "$src"/configs/examples/*.yaml "$src"/configs/reproductions/*.yaml; do
  name=$(basename "$(dirname "$cfg")")/$(basename "$cfg" .yaml)
  if grep -q 'shared/data' "$cfg" && [[ ! -d "$src/../shared/data" ]]; then
    skipped=$((skipped + 1))
    continue
  fi
  out="$w/${name//\//-}"
  if timeout 120 "$bin" run "$cfg" --out "$out" --quiet >"$out.log" 2>&1 && [[ -s "$out/summary.json" ]]
  then
    ran=$((ran + 1))
  else
    echo "FAIL: $name: $(tail -n 2 "$out.log")"
    fail=1
  fi
done
echo "examples: $ran ran, $skipped skipped (no ../shared/data)"
((ran > 0)) || { echo "FAIL: no example ran"; exit 1; }
exit $fail
