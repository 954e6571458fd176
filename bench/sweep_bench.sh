#!/usr/bin/env bash
# Sizing-sweep throughput: a 1,000-point `servesim size` sweep (10 accelerators x 10 seat limits x
# 10 token budgets, each point 400 chat requests on Llama 3.1 8B with roofline step times) run with
# --jobs 1 and --jobs 2; prints points per second and wall time, and checks that both runs wrote
# the same files. Priced in the catalogue's `mixed` tier: the one-source `on_demand` tier lists
# neither the A100 40GB nor the MI300X (docs/hardware.md#prices).
# Usage: bash bench/sweep_bench.sh [SERVESIM] [--small] (default build/servesim). --small runs
# 2 x 2 x 2 points of 40 requests (the ctest sweep_bench_small), to check that the bench runs.
# docs/sizing.md#performance has the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/servesim}
small=${2:-}
[[ -z $small || $small == --small ]] || { echo "usage: sweep_bench.sh [SERVESIM] [--small]" >&2; exit 2; }
[[ -x $bin ]] || { echo "no $bin: build it first (cmake --build build --target servesim)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/base.yaml" <<'YAML'
workload:
  synthetic:
    requests: 400
    arrival: {kind: poisson, rate_per_s: 8}
    prompt_tokens: {kind: lognormal, median: 400, sigma: 0.8, max: 4096}
    output_tokens: {kind: lognormal, median: 200, sigma: 0.7, max: 1024}
step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16}
scheduler: {kind: continuous, max_num_seqs: 64, max_num_batched_tokens: 2048, chunked_prefill: true}
kv:
  policy: paged
  block_size: 16
  memory: {accelerator_gib: 74.5, parameters: 8030261248, weight_dtype: bf16, layers: 32,
           kv_heads: 8, head_dim: 128}
seed: 1
YAML
cat > "$work/sweep.yaml" <<'YAML'
base: base.yaml
slo: {ttft_ms: 1000, tpot_ms: 50}
price_tier: mixed
axes:
  accelerator: [a100-40gb, a100-80gb, b200, h100-sxm, h200, l4, l40s, mi300x, rtx-4090, rtx-pro-6000]
  scheduler.max_num_seqs: [4, 8, 16, 24, 32, 48, 64, 96, 128, 256]
  scheduler.max_num_batched_tokens: [512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 16384]
YAML
if [[ -n $small ]]; then
  sed -i -e 's/requests: 400/requests: 40/' "$work/base.yaml"
  sed -i -e 's/\[a100-40gb, .*\]/[a100-40gb, mi300x]/' -e 's/\[4, 8, .*\]/[8, 64]/' \
    -e 's/\[512, 768, .*\]/[512, 2048]/' "$work/sweep.yaml"
fi
points=$("$bin" size "$work/sweep.yaml" --dry-run | awk 'NR == 1 {print $1}')
for jobs in 1 2; do
  start=$(date +%s.%N)
  "$bin" size "$work/sweep.yaml" --out "$work/j$jobs" --jobs "$jobs" --quiet
  end=$(date +%s.%N)
  python3 -c "import sys; p, w = int(sys.argv[1]), float(sys.argv[3]) - float(sys.argv[2]); \
print(f'--jobs {sys.argv[4]}: {p} points in {w:.2f} s wall, {p / w:.1f} points/s')" \
    "$points" "$start" "$end" "$jobs"
done
[[ $(wc -l < "$work/j1/points.csv") -eq $((points + 1)) ]] \
  || { echo "points.csv has not one row per point" >&2; exit 1; }
cmp "$work/j1/points.csv" "$work/j2/points.csv" && cmp "$work/j1/summary.json" "$work/j2/summary.json" \
  && echo "points.csv and summary.json identical for --jobs 1 and --jobs 2"
