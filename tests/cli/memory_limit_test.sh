#!/usr/bin/env bash
# Memory as a limit, against the built binary under a real `ulimit -v` (docs/errors.md#memory):
#   the estimate (SERVESIM_LOG=debug) is above a measured overload's peak resident memory and
#   within 2.5 times it;
#   a run whose floor is above the limit is refused at once: exit 3, the figure, no results;
#   an overload that runs out of memory during the run ends with exit 3, plain words and the
#   options that bound it, after a warning with the estimate, and no results.
# usage: memory_limit_test.sh SERVESIM WORKDIR
set -uo pipefail
bin="$1"; w="$2"
rm -rf "$w"; mkdir -p "$w"
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1 ($2)"; fail=1; fi; }

# An overload: requests arrive 100 times faster than one sequence of 8 is served, so nearly
# every request is held at once.
overload() {
  cat <<YAML
workload:
  synthetic:
    requests: $1
    arrival: {kind: poisson, rate_per_s: 100000}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: fixed, value: 5}
step_time: {kind: linear, base_ms: 1}
scheduler: {kind: continuous, max_num_seqs: 8}
kv: {policy: paged, capacity_tokens: 1000}
YAML
}
overload 300000 >"$w/o300k.yaml"
overload 600000 >"$w/o600k.yaml"

# 1. The estimate against a measured run: peak resident memory (KiB) of 300,000 held requests.
/usr/bin/time -o "$w/time.txt" -f '%M' env SERVESIM_LOG=debug "$bin" run "$w/o300k.yaml" \
  --out "$w/measured" -q 2>"$w/measured.err" >/dev/null
rss_kib=$(tail -1 "$w/time.txt")
peak=$(sed -n 's/.*memory estimate: floor [0-9]* bytes, peak \([0-9]*\) bytes.*/\1/p' \
  "$w/measured.err")
echo "measured ${rss_kib} KiB resident; estimated peak ${peak} bytes"
check "the estimate is printed at debug level" '[[ -n "$peak" ]]'
check "the estimate covers the measured peak" '(( peak >= rss_kib * 1024 ))'
check "the estimate is within 2.5x of it" '(( peak * 10 <= rss_kib * 1024 * 25 ))'

# 2. A floor above the limit: refused before anything runs.
( ulimit -v 80000; "$bin" run "$w/o300k.yaml" --out "$w/refused" -q ) 2>"$w/refused.err"
rc=$?
check "refused: exit 3" '[[ $rc == 3 ]]'
check "refused: the figure and the limit" \
  'grep -q "not enough memory: a run of 300000 requests needs at least .* MiB .*ulimit -v" "$w/refused.err"'
check "refused: nothing written" '[[ ! -e "$w/refused" ]]'

# 3. An overload that runs out of memory: a warning first, then plain words, no results.
( ulimit -v 250000; "$bin" run "$w/o600k.yaml" --out "$w/oom" -q ) 2>"$w/oom.err"
rc=$?
cat "$w/oom.err"
check "out of memory: exit 3" '[[ $rc == 3 ]]'
check "out of memory: warned with the estimate" \
  'grep -q "warning: a run of 600000 requests may need up to .* if up to 600000 of them are held at once" "$w/oom.err"'
check "out of memory: plain words and the options" \
  'grep -q "error: out of memory: the run needed more memory than it could get (the address-space limit (ulimit -v) of 244 MiB); bound the requests held at once with --max-queued" "$w/oom.err"'
check "out of memory: no internal error" '! grep -q "internal error\|bad_alloc" "$w/oom.err"'
check "out of memory: no summary.json" '[[ ! -e "$w/oom/summary.json" ]]'
check "out of memory: no requests.csv" '[[ ! -e "$w/oom/requests.csv" ]]'
# The same overload bounded by --max-queued fits and ends marked partial.
( ulimit -v 250000; "$bin" run "$w/o600k.yaml" --out "$w/bounded" -q --max-queued 100000 ) \
  2>"$w/bounded.err"
rc=$?
check "bounded by --max-queued: exit 0" '[[ $rc == 0 ]]'
check "bounded by --max-queued: marked partial" \
  'grep -q "\"stopped_by\": \"queue limit\"" "$w/bounded/summary.json"'
exit $fail
