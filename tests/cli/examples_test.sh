#!/usr/bin/env bash
# Every example config (configs/examples/*.yaml) and reproduction kit (configs/reproductions/)
# runs to completion with exit 0 and writes summary.json. None is skipped: the data they read
# ships in the repository's data/ folder (docs/data.md).
# usage: examples_test.sh SERVESIM SOURCE_DIR WORKDIR
set -uo pipefail
bin="$1"; src="$2"; w="$3"
rm -rf "$w"; mkdir -p "$w"
ran=0; fail=0
for cfg in "$src"/configs/examples/*.yaml "$src"/configs/reproductions/*.yaml; do
  name=$(basename "$(dirname "$cfg")")/$(basename "$cfg" .yaml)
  out="$w/${name//\//-}"
  if timeout 120 "$bin" run "$cfg" --out "$out" --quiet >"$out.log" 2>&1 && [[ -s "$out/summary.json" ]]
  then
    ran=$((ran + 1))
  else
    echo "FAIL: $name: $(tail -n 2 "$out.log")"
    fail=1
  fi
done
echo "examples: $ran ran"
((ran > 0)) || { echo "FAIL: no example ran"; exit 1; }
exit $fail
