#!/usr/bin/env python3
"""A consumer of `vllm bench serve` result files reads servesim's export unchanged.

    python3 tests/metrics/vllm_export_test.py SERVESIM_BINARY WORK_DIR

Runs the default scenario with `--export vllm-bench --percentiles 50,90,99,99.9`, loads
WORK_DIR/out/vllm-bench.json and holds it against the layout vLLM writes with --save-result
--save-detailed --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99,99.9
(vllm/benchmarks/serve.py: its `result` and `result_json` dicts), written out below: the same
keys, each of the type vLLM writes. Then it does what a plotting notebook does with such a file
and checks that the per-request lists agree with the statistics.
"""
import json
import math
import os
import statistics
import subprocess
import sys

PERCENTILES = ["50", "90", "99", "99.9"]

# key -> the types vLLM writes there (None: JSON null). The keys vLLM's main adds before the
# results (date is left out by servesim: its outputs do not depend on the wall clock).
VLLM_LAYOUT = {
    "endpoint_type": (str,),
    "backend": (str,),
    "label": (str, type(None)),
    "model_id": (str,),
    "tokenizer_id": (str,),
    "num_prompts": (int,),
    "request_rate": (float, int, str),  # a number, or "inf" for an unpaced run
    "burstiness": (float, type(None)),  # servesim: null, a trace has no burstiness factor
    "max_concurrency": (int, type(None)),
    "duration": (float,),
    "completed": (int,),
    "failed": (int,),
    "total_input_tokens": (int,),
    "total_output_tokens": (int,),
    "request_throughput": (float,),
    "request_goodput": (float, type(None)),  # null without --goodput (servesim: an slo section)
    "output_throughput": (float,),
    "total_token_throughput": (float,),
    "input_lens": (list,),
    "output_lens": (list,),
    "ttfts": (list,),
    "itls": (list,),
    "generated_texts": (list,),
    "errors": (list,),
    "max_output_tokens_per_s": (float,),
    "max_concurrent_requests": (int,),
}
for metric in ["ttft", "tpot", "itl", "e2el"]:
    for stat in ["mean", "median", "std"]:
        VLLM_LAYOUT[f"{stat}_{metric}_ms"] = (float,)
    for p in PERCENTILES:
        VLLM_LAYOUT[f"p{p}_{metric}_ms"] = (float,)
LEFT_OUT = {"date"}


def is_type(value, types):
    # JSON gives an int for a whole float written without a fraction; vLLM's floats then read as
    # int too, so an int is a float here (never the other way).
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, types) and not (isinstance(value, bool) and bool not in types)


def main():
    binary, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "out")
    subprocess.run([binary, "run", "--out", out, "-q", "--no-progress", "--export", "vllm-bench",
                    "--percentiles", ",".join(PERCENTILES)], check=True)
    with open(os.path.join(out, "vllm-bench.json")) as f:
        data = json.load(f)
    failures = []
    missing = sorted(set(VLLM_LAYOUT) - set(data))
    extra = sorted(set(data) - set(VLLM_LAYOUT))
    if missing:
        failures.append(f"keys vLLM writes that the export lacks: {missing}")
    if extra:
        failures.append(f"keys vLLM does not write: {extra}")
    for key, types in VLLM_LAYOUT.items():
        if key in data and not is_type(data[key], types):
            failures.append(f"{key}: {type(data[key]).__name__}, vLLM writes "
                            f"{'/'.join(t.__name__ for t in types)}")
    n = data["num_prompts"]
    for key, inner in [("input_lens", int), ("output_lens", int), ("ttfts", float),
                       ("itls", list), ("generated_texts", str), ("errors", str)]:
        values = data[key]
        if len(values) != n or not all(is_type(v, (inner,)) for v in values):
            failures.append(f"{key}: not {n} values of type {inner.__name__}")
    if not all(is_type(g, (float,)) for gaps in data["itls"] for g in gaps):
        failures.append("itls: a gap that is not a number")

    # What a notebook does: statistics from the per-request lists (seconds) against the
    # summary figures (ms), and the totals.
    done = [i for i in range(n) if data["errors"][i] == ""]
    itls = [g for i in done for g in data["itls"][i]]
    ttfts = [data["ttfts"][i] for i in done]
    checks = [
        ("mean_itl_ms", statistics.fmean(itls) * 1e3),
        ("std_itl_ms", statistics.pstdev(itls) * 1e3),
        ("median_itl_ms", statistics.median(itls) * 1e3),
        ("mean_ttft_ms", statistics.fmean(ttfts) * 1e3),
        ("median_ttft_ms", statistics.median(ttfts) * 1e3),
        ("completed", len(done)),
        ("total_output_tokens", sum(data["output_lens"][i] for i in done)),
        ("total_input_tokens", sum(data["input_lens"][i] for i in done)),
    ]
    for key, expected in checks:
        if not math.isclose(data[key], expected, rel_tol=1e-9, abs_tol=1e-9):
            failures.append(f"{key} = {data[key]}, the per-request lists give {expected}")
    for i in done:  # each request's gaps: output tokens - 1 of them
        if len(data["itls"][i]) != max(data["output_lens"][i] - 1, 0):
            failures.append(f"request {i}: {len(data['itls'][i])} gaps for "
                            f"{data['output_lens'][i]} tokens")
            break
    thr = data["output_throughput"] * data["duration"]
    if not math.isclose(thr, data["total_output_tokens"], rel_tol=1e-9):
        failures.append("output_throughput x duration is not total_output_tokens")

    for f in failures:
        print("vllm_export:", f)
    if failures:
        return 1
    print(f"vllm_export: {len(data)} keys as vLLM writes them; {n} requests, {len(itls)} gaps; "
          f"mean ITL {data['mean_itl_ms']:.3f} ms, p99 ITL {data['p99_itl_ms']:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
