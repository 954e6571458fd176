#!/usr/bin/env bash
# Real signals and concurrent runs against the built binary (docs/errors.md#signals and
# #concurrent-use-of-one-output-folder):
#   SIGTERM stops `trace gen` promptly, exit 143, no file, temporary or new folder left;
#   a second run into a busy folder is refused (exit 2) and the first keeps its results;
#   SIGHUP stops `run` with results marked partial (exit 0), nothing hidden left;
#   SIGINT stops `capacity` (exit 130) and writes nothing;
#   after SIGKILL, the next run into the folder removes the killed run's temporaries;
#   a SIGHUP ignored when servesim starts (nohup) stays ignored.
# usage: signals_test.sh SERVESIM WORKDIR
set -uo pipefail
set -m  # job control: background jobs keep SIGINT (a shell without it makes them ignore it)
bin="$1"; w="$2"
rm -rf "$w"; mkdir -p "$w"
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1 ($2)"; fail=1; fi; }
# Waits up to 60 s for a file matching the glob to appear while process $2 runs.
wait_for() {
  for _ in $(seq 600); do
    compgen -G "$1" >/dev/null && return 0
    kill -0 "$2" 2>/dev/null || { echo "FAIL: process $2 ended before $1 appeared"; return 1; }
    sleep 0.1
  done
  echo "FAIL: no $1 after 60 s"; return 1
}

# Sends signal $1 to process $2 and waits for it, up to 30 s, then kills it outright (a
# servesim that ignores the signal fails the checks instead of hanging the test); sets rc.
signal_and_wait() {
  kill "-$1" "$2"
  ( sleep 30; kill -KILL "$2" 2>/dev/null ) & local watchdog=$!
  wait "$2"; rc=$?
  kill "$watchdog" 2>/dev/null; wait "$watchdog" 2>/dev/null
}

# A workload that never ends in test time: a billion requests, one every millisecond.
cat >"$w/long.yaml" <<'YAML'
workload:
  synthetic:
    requests: 1000000000
    arrival: {kind: fixed, rate_per_s: 1000}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: fixed, value: 10}
step_time: {kind: linear, base_ms: 1}
scheduler: {kind: continuous, max_num_seqs: 64}
kv: {policy: paged, capacity_tokens: 1000000}
YAML
cp "$w/long.yaml" "$w/gen.yaml"  # trace gen reads only workload and seed
echo "slo: {ttft_ms: 1000}" >>"$w/long.yaml"
cat >"$w/short.yaml" <<'YAML'
workload:
  synthetic:
    requests: 5
    arrival: {kind: fixed, rate_per_s: 10}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: fixed, value: 3}
step_time: {kind: linear, base_ms: 1}
scheduler: {kind: continuous, max_num_seqs: 4}
kv: {policy: paged, capacity_tokens: 1000}
YAML

# 1. trace gen and SIGTERM.
"$bin" trace gen "$w/gen.yaml" --out "$w/gen" >"$w/gen.out" 2>"$w/gen.err" &
pid=$!
wait_for "$w/gen/.trace.csv.*.partial" "$pid" || fail=1
start=$(date +%s%N); signal_and_wait TERM "$pid"; ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "trace gen exits 143 on SIGTERM" "[[ $rc == 143 ]]"
check "trace gen stops within 2 s of SIGTERM (took $ms ms)" "[[ $ms -lt 2000 ]]"
check "trace gen says it was interrupted" "grep -q 'servesim: interrupted by SIGTERM; nothing was written' '$w/gen.err'"
check "trace gen leaves no file, no temporary, not even the folder it made" "[[ ! -e '$w/gen' ]]"

# 2. two runs into one folder, then SIGHUP.
"$bin" run "$w/long.yaml" --out "$w/r" --no-progress >"$w/r.out" 2>"$w/r.err" &
pid=$!
wait_for "$w/r/.requests.csv.*.partial" "$pid" || fail=1
check "the running run holds the folder's lock file" "[[ -f '$w/r/.servesim.lock' ]]"
"$bin" run "$w/short.yaml" --out "$w/r" -q >"$w/r2.out" 2>"$w/r2.err"; rc=$?
check "a second run into the busy folder exits 2" "[[ $rc == 2 ]]"
check "and says the folder is busy" "grep -q 'another servesim command is writing results into this folder' '$w/r2.err'"
signal_and_wait HUP "$pid"
check "run exits 0 on SIGHUP, as on SIGINT" "[[ $rc == 0 ]]"
check "its summary is marked interrupted" "grep -q '\"stopped_by\": \"interrupted\"' '$w/r/summary.json'"
check "its requests.csv is its own (the refused run wrote nothing)" "[[ \$(wc -l <'$w/r/requests.csv') -gt 6 ]]"
check "no temporary or lock file is left" "[[ -z \"\$(ls -A '$w/r' | grep '^\.')\" ]]"

# 3. capacity and SIGINT.
"$bin" capacity "$w/long.yaml" --out "$w/cap" -q >"$w/cap.out" 2>"$w/cap.err" &
pid=$!
wait_for "$w/cap/.servesim.lock" "$pid" || fail=1
sleep 0.5
signal_and_wait INT "$pid"
check "capacity exits 130 on SIGINT" "[[ $rc == 130 ]]"
check "capacity writes nothing" "[[ ! -e '$w/cap' ]]"

# 4. SIGKILL leaves temporaries; the next run into the folder removes them.
"$bin" run "$w/long.yaml" --out "$w/k" --no-progress >/dev/null 2>&1 &
pid=$!
wait_for "$w/k/.requests.csv.*.partial" "$pid" || fail=1
kill -KILL "$pid"; wait "$pid" 2>/dev/null
check "a killed run leaves its temporary" "compgen -G '$w/k/.requests.csv.*.partial' >/dev/null"
"$bin" run "$w/short.yaml" --out "$w/k" -q; rc=$?
check "the next run into the folder succeeds" "[[ $rc == 0 ]]"
check "and leaves only its results" "[[ \"\$(ls -A '$w/k' | tr '\n' ' ')\" == 'requests.csv summary.json ' ]]"

# 5. nohup: an ignored SIGHUP stays ignored.
(trap '' HUP; exec "$bin" run "$w/long.yaml" --out "$w/n" --no-progress --max-wall-time 2 \
   >"$w/n.out" 2>"$w/n.err") &
pid=$!
wait_for "$w/n/.requests.csv.*.partial" "$pid" || fail=1
signal_and_wait HUP "$pid"
check "a run started with SIGHUP ignored runs on (exit 0)" "[[ $rc == 0 ]]"
check "and stops at its wall-time limit, not at the hangup" "grep -q '\"stopped_by\": \"wall time limit\"' '$w/n/summary.json'"

exit $fail
