#!/usr/bin/env bash
# Renders a servesim report in headless Chromium and fails on any page error or on a chart that
# drew nothing. Usage: browser_test.sh SERVESIM SOURCE_DIR WORK_DIR
# Builds the report from three small runs (static, dynamic and continuous batching on the same
# trace, with steps.csv), a roofline run, a two-replica run with an SLO, the hand-written sweep
# fixture, a capacity search and a run of two request classes, and a second page of a one-request run (every distribution a
# single value), then reads each page's #report-status (report/report.js keeps it up to date)
# from Chromium's --dump-dom. Keeps WORK_DIR/report.html, one.html and screenshots
# (report.png, one.png) as artefacts.
# Exit 77 (ctest: skipped) when chromium is not installed.
set -euo pipefail
servesim=$1
src=$2
work=$3

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [[ -z $browser ]]; then
  echo "SKIPPED: no chromium on PATH (apt-get install chromium; scripts/install-deps.sh does)"
  exit 77
fi

rm -rf "$work"
mkdir -p "$work/runs"
for kind in static dynamic continuous; do
  "$servesim" run "$src/configs/examples/seed-$kind.yaml" --out "$work/runs/$kind" --steps \
    --quiet --no-progress
done
# The first 20 simulated seconds are enough for a roofline of a few thousand steps.
"$servesim" run "$src/configs/examples/roofline-llama-3.1-8b-h100.yaml" --out "$work/runs/roofline" \
  --steps --quiet --no-progress --max-sim-time 20
# Two replicas with an SLO: the per-replica charts, and SLO lines on the TTFT and TPOT CDFs.
"$servesim" run "$src/configs/examples/seed-continuous.yaml" --out "$work/cluster/run" --quiet \
  --no-progress --set 'cluster={replicas: 2, router: {kind: round_robin}}' \
  --set 'slo={ttft_ms: 50, tpot_ms: 10}'
# A prefill and a decode pool: per-replica charts named by pool, and the per-pool chart.
cat >"$work/pools.yaml" <<'YAML'
workload: {synthetic: {requests: 40, arrival: {kind: poisson, rate_per_s: 20},
  prompt_tokens: {kind: fixed, value: 500}, output_tokens: {kind: fixed, value: 20}}}
step_time: {kind: linear, base_ms: 10}
scheduler: {kind: continuous, max_num_seqs: 8}
kv: {policy: paged, block_size: 16, capacity_tokens: 65536}
cluster:
  router: {kind: round_robin}
  decode_router: {kind: round_robin}
  pools:
    - {name: pre, role: prefill, replicas: 1}
    - {name: dec, role: decode, replicas: 2}
  kv_transfer: {bandwidth_gb_s: 1, latency_us: 20, kv_bytes_per_token: 1000}
slo: {ttft_ms: 100, tpot_ms: 20}
YAML
"$servesim" run "$work/pools.yaml" --out "$work/pools/run" --quiet --no-progress
# Two request classes with an SLO: the per-class CDFs and the SLO attainment per class.
cat >"$work/classes.yaml" <<'YAML'
workload:
  mix:
    components:
      - {name: chat, synthetic: {requests: 30, arrival: {kind: poisson, rate_per_s: 20},
         prompt_tokens: {kind: uniform, min: 10, max: 200}, output_tokens: {kind: uniform, min: 2, max: 40}}}
      - {name: batch, priority: 1, synthetic: {requests: 20, arrival: {kind: burst},
         prompt_tokens: {kind: uniform, min: 500, max: 1000}, output_tokens: {kind: uniform, min: 2, max: 80}}}
step_time: {kind: linear, base_ms: 5, per_seq_ms: 0.5, per_prefill_token_ms: 0.01}
scheduler: {kind: vllm, max_num_seqs: 8, max_num_batched_tokens: 2048, scheduling_policy: priority,
  enable_prefix_caching: false}
kv: {policy: paged, block_size: 16, capacity_tokens: 65536}
slo: {ttft_ms: 200, tpot_ms: 10}
YAML
"$servesim" run "$work/classes.yaml" --out "$work/classes/run" --quiet --no-progress
# One request: every distribution is one value (a page of its own, so that its CDFs must draw).
"$servesim" run "$src/configs/examples/seed-continuous.yaml" --out "$work/one/run" --steps \
  --quiet --no-progress --set workload.synthetic.requests=1
# A capacity search of a few probes (tests/report/report_test.cpp's).
cat >"$work/capacity.yaml" <<'YAML'
workload:
  synthetic:
    requests: 40
    arrival: {kind: fixed, rate_per_s: 10}
    prompt_tokens: {kind: fixed, value: 1}
    output_tokens: {kind: fixed, value: 2}
step_time: {kind: linear, base_ms: 10}
scheduler: {kind: continuous, max_num_seqs: 1}
kv: {policy: paged, capacity_tokens: 1000, block_size: 1}
slo: {ttft_ms: 30}
YAML
"$servesim" capacity "$work/capacity.yaml" --out "$work/capacity" -q
# A sweep of the offered rate and the seats (no accelerator, so no costs): the charts against a
# swept rate, one line per seat count.
cat >"$work/rate-base.yaml" <<'YAML'
workload: {synthetic: {requests: 60, arrival: {kind: poisson, rate_per_s: 200},
  prompt_tokens: {kind: fixed, value: 32}, output_tokens: {kind: fixed, value: 3}}}
step_time: {kind: linear, base_ms: 10}
scheduler: {kind: continuous, max_num_seqs: 8}
kv: {policy: paged, block_size: 16, capacity_tokens: 4096}
YAML
cat >"$work/rate-sweep.yaml" <<'YAML'
base: rate-base.yaml
slo: {ttft_ms: 100, tpot_ms: 50}
axes:
  workload.synthetic.arrival.rate_per_s: [20, 50, 100, 200, 400]
  scheduler.max_num_seqs: [1, 4, 8]
YAML
"$servesim" size "$work/rate-sweep.yaml" --out "$work/rate-sweep" -q
"$servesim" report "$work/runs/static" "$work/runs/dynamic" "$work/runs/continuous" \
  "$work/runs/roofline" "$work/cluster/run" "$work/pools/run" "$src/tests/data/report/sweep-fixture" \
  "$work/capacity" "$work/rate-sweep" "$work/classes/run" --out "$work"   # $work/report.html
"$servesim" report "$work/one/run" --out "$work/one"   # $work/one/report.html

flags=(--headless --no-sandbox --disable-gpu --disable-extensions --no-first-run
       --user-data-dir="$work/chromium-profile" --virtual-time-budget=10000)
attr() { sed -n "s/.*$1=\"\\([^\"]*\\)\".*/\\1/p" <<<"$status"; }

# check PAGE EXPECTED: renders WORK_DIR/PAGE.html, fails on a page error or a chart short of ink.
fail=0
check() {
  local page=$1 expected=$2
  local url="file://$(cd "$work" && pwd)/$page.html"
  # uPlot draws on animation frames, which a loaded machine's headless Chromium can leave undone
  # when the virtual time budget runs out; a chart short of ink gets one more render with a
  # longer budget before the test fails (a chart that never draws fails both).
  for budget in 10000 30000; do
    flags[-1]=--virtual-time-budget=$budget
    timeout 90 "$browser" "${flags[@]}" --dump-dom "$url" >"$work/$page.dom.html" 2>"$work/chromium.log" || {
      echo "FAIL: chromium did not render $page.html (see $work/chromium.log)"; tail -20 "$work/chromium.log"
      exit 1
    }
    status=$(grep -o '<div id="report-status"[^>]*>' "$work/$page.dom.html" || true)
    [[ $(attr data-drawn) == "$(attr data-charts)" && $(attr data-done) == true ]] && break
    echo "note: $page: $(attr data-drawn) of $(attr data-charts) charts drawn with a ${budget} ms budget"
  done
  timeout 90 "$browser" "${flags[@]}" --window-size=1400,9000 --screenshot="$work/$page.png" "$url" \
    >>"$work/chromium.log" 2>&1 || echo "note: no screenshot (see $work/chromium.log)"
  local errors charts drawn done_flag
  errors=$(attr data-errors)
  charts=$(attr data-charts)
  drawn=$(attr data-drawn)
  done_flag=$(attr data-done)
  echo "$page: errors=$errors charts=$charts drawn=$drawn done=$done_flag (expected $expected charts)"
  [[ $done_flag == true ]] || { echo "FAIL: $page: report.js did not finish"; fail=1; }
  [[ $errors == 0 ]] || {
    echo "FAIL: $page: $errors page errors:"
    sed -n 's/.*<span id="report-error-list">\([^<]*\)<.*/\1/p' "$work/$page.dom.html"
    fail=1
  }
  [[ $charts == "$expected" ]] || { echo "FAIL: $page: $charts charts made, expected $expected"; fail=1; }
  [[ $drawn == "$charts" ]] || { echo "FAIL: $page: only $drawn of $charts charts drew their data"; fail=1; }
  [[ -s $work/$page.png ]] && echo "screenshot: $work/$page.png"
  echo "$page: $work/$page.html ($(wc -c <"$work/$page.html") bytes)"
}

# CHARTS_EXPECTED: 4 latency CDFs + their 4 tails, the ITL percentiles, 3 per-replica charts each of the cluster and
# the pools runs and the pools run's per-pool chart,
# 6 time series, 1 roofline, 6 sweep charts (throughput, cost by TTFT and by TPOT; attainment,
# p99 TTFT and p99 TPOT against rate) of the fixture, 3 capacity charts (the same three against
# offered rate), 4 of the rate sweep (throughput against p99 E2E and the three against its rate
# axis; it has no costs), 4 per-class charts of the classes run (TTFT and TPOT CDFs per class,
# ITL percentiles per class, SLO attainment per class).
check report 40
# The one-request page: 4 CDFs + 4 tails of one value each, the ITL percentiles, 6 time series.
check one/report 15
exit $fail
