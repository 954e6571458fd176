#!/usr/bin/env bash
# Builds the libFuzzer harnesses in the sanitizer build (scripts/sanitize-build.sh: clang, ASan +
# UBSan, SERVESIM_FUZZ=ON; the folder scripts/test.sh runs the sanitized suite in) and runs each for
# SECONDS (default 60) on its seed corpus (fuzz/corpus/<target>/) with its dictionary. Fails on
# any finding: a crash, a sanitizer report, an uncaught exception, an input slower than the
# per-input timeout, a leak or an out-of-memory; the input is saved under the build folder.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     targets: csv_trace config vllm_jsonl trace_formats
#                                             calibrate report (default: all)
#   SERVESIM_FUZZ_BUILD=dir                   build folder (default build-asan)
#   SERVESIM_FUZZ_JOBS=n                      ninja jobs (default: ninja's own)
#   SERVESIM_FUZZ_PARALLEL=n                  fuzzers run at once (default: the core count, so
#                                             six 30 s runs take 90 s on two cores, not 180)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(csv_trace config vllm_jsonl trace_formats calibrate report)
source scripts/sanitize-build.sh
build=$SERVESIM_SAN_BUILD
cmake --build "$build" ${SERVESIM_FUZZ_JOBS:+-j "$SERVESIM_FUZZ_JOBS"} \
  --target "${targets[@]/#/fuzz_}"

# A small quarantine keeps the resident size well under -rss_limit_mb on long runs.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:quarantine_size_mb=64}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# One fuzzer: its log, and on a finding the log's tail; exit 1 on a finding.
fuzz_one() {
  local t=$1 work="$build/fuzz-work/$1"
  mkdir -p "$work/corpus"  # inputs the fuzzer finds go here, never into fuzz/corpus/
  if ! "$build/fuzz/fuzz_$t" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
      -max_total_time="$secs" -print_final_stats=1 -dict="fuzz/$t.dict" \
      -artifact_prefix="$work/" "$work/corpus" "fuzz/corpus/$t" 2>"$work/log"; then
    tail -n 60 "$work/log"
    echo "fuzz_$t: FINDING; the input is in $work/ (crash-*, timeout-*, leak-* or oom-*)"
    return 1
  fi
  echo "== fuzz_$t for ${secs}s: $(grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^Done' \
    "$work/log" | tr '\n' ' ')"
}

parallel=${SERVESIM_FUZZ_PARALLEL:-$(nproc)}
status=0
running=0
for t in "${targets[@]}"; do
  if ((running >= parallel)); then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || status=1
  running=$((running - 1))
done
exit "$status"
