#!/usr/bin/env bash
# Renders a servesim report in headless Chromium and fails on any page error or on a chart that
# drew nothing. Usage: browser_test.sh SERVESIM SOURCE_DIR WORK_DIR
# Builds the report from three small runs (static, dynamic and continuous batching on the same
# trace, with steps.csv), a roofline run and the hand-written sweep fixture, then reads the
# page's #report-status (report/report.js keeps it up to date) from Chromium's --dump-dom.
# Keeps WORK_DIR/report.html and a screenshot, WORK_DIR/report.png, as artefacts.
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
"$servesim" report "$work/runs/static" "$work/runs/dynamic" "$work/runs/continuous" \
  "$work/runs/roofline" "$src/tests/data/report/sweep-fixture" --out "$work/report.html"

# 4 latency CDFs + 6 time series + 1 roofline + 3 sweep charts (throughput, cost by TTFT, by TPOT)
expected=14
flags=(--headless --no-sandbox --disable-gpu --disable-extensions --no-first-run
       --user-data-dir="$work/chromium-profile" --virtual-time-budget=10000)
url="file://$(cd "$work" && pwd)/report.html"
attr() { sed -n "s/.*$1=\"\\([^\"]*\\)\".*/\\1/p" <<<"$status"; }
# uPlot draws on animation frames, which a loaded machine's headless Chromium can leave undone
# when the virtual time budget runs out; a chart short of ink gets one more render with a longer
# budget before the test fails (a chart that never draws fails both).
for budget in 10000 30000; do
  flags[-1]=--virtual-time-budget=$budget
  timeout 90 "$browser" "${flags[@]}" --dump-dom "$url" >"$work/dom.html" 2>"$work/chromium.log" || {
    echo "FAIL: chromium did not render the page (see $work/chromium.log)"; tail -20 "$work/chromium.log"
    exit 1
  }
  status=$(grep -o '<div id="report-status"[^>]*>' "$work/dom.html" || true)
  [[ $(attr data-drawn) == "$(attr data-charts)" && $(attr data-done) == true ]] && break
  echo "note: $(attr data-drawn) of $(attr data-charts) charts drawn with a ${budget} ms budget"
done
timeout 90 "$browser" "${flags[@]}" --window-size=1400,5200 --screenshot="$work/report.png" "$url" \
  >>"$work/chromium.log" 2>&1 || echo "note: no screenshot (see $work/chromium.log)"

errors=$(attr data-errors)
charts=$(attr data-charts)
drawn=$(attr data-drawn)
done_flag=$(attr data-done)
echo "report-status: errors=$errors charts=$charts drawn=$drawn done=$done_flag (expected $expected charts)"
fail=0
[[ $done_flag == true ]] || { echo "FAIL: report.js did not finish"; fail=1; }
[[ $errors == 0 ]] || {
  echo "FAIL: $errors page errors:"
  sed -n 's/.*<span id="report-error-list">\([^<]*\)<.*/\1/p' "$work/dom.html"
  fail=1
}
[[ $charts == "$expected" ]] || { echo "FAIL: $charts charts made, expected $expected"; fail=1; }
[[ $drawn == "$charts" ]] || { echo "FAIL: only $drawn of $charts charts drew their data"; fail=1; }
[[ -s $work/report.png ]] && echo "screenshot: $work/report.png"
echo "report: $work/report.html ($(wc -c <"$work/report.html") bytes)"
exit $fail
