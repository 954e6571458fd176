#!/usr/bin/env python3
"""servesim's CPU KV offload against the vLLM offloading connector's published figures
(docs/kv-offload.md#against-a-published-figure).

The figures: the vLLM blog "Inside vLLM's New Offloading Connector" (vllm-project.github.io,
2025-12-29), Llama-3.1-8B-Instruct on one H100 80GB HBM3. Figure 2: 10,000 prefill requests of
512 tokens, throughput at 100% CPU-cache hits "up to X9" that at 0%. Figure 1: a single 512-token
request's TTFT loaded from CPU memory against computed, "only decreased by X2".
This runs configs/examples/kv-offload-published-vllm-cpu-h100.yaml with its host tier (100%
hits) and with a one-block tier (0% hits), the measured batch being the requests arriving at
600 s, and configs/examples/kv-offload-published-vllm-ttft-h100.yaml, whose first request is
computed and third reloaded, and prints servesim's ratios beside the published ones.

  python3 scripts/offload_published_check.py [--servesim build/servesim] [--set KEY=VALUE ...]

`--set` is passed to every run (the docs' variants: another scheduler budget, another overlap).
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THROUGHPUT = os.path.join(ROOT, "configs/examples/kv-offload-published-vllm-cpu-h100.yaml")
TTFT = os.path.join(ROOT, "configs/examples/kv-offload-published-vllm-ttft-h100.yaml")
PUBLISHED = {"throughput_ratio": 9.0, "ttft_ratio": 2.0}
MEASURED_FROM_S = 600.0        # the measured batch's arrival time in the trace
MEASURED_TOKENS = 10000 * 512  # its prompt tokens
NO_HITS = "kv.offload.tiers=[{name: host, capacity_gib: 0.002, bandwidth_gb_s: 50}]"


def run(servesim, config, out, extra=()):
    subprocess.run([servesim, "run", config, "--out", out, "--quiet", "--no-progress"] +
                   list(extra), check=True)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, "requests.csv")) as f:
        return summary, list(csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servesim", default=os.path.join(ROOT, "build/servesim"))
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="passed to every run")
    args = ap.parse_args()
    sets = [a for kv in args.set for a in ("--set", kv)]
    with tempfile.TemporaryDirectory() as tmp:
        hits, _ = run(args.servesim, THROUGHPUT, os.path.join(tmp, "hits"), sets)
        misses, _ = run(args.servesim, THROUGHPUT, os.path.join(tmp, "misses"),
                        sets + ["--set", NO_HITS])
        _, ttft = run(args.servesim, TTFT, os.path.join(tmp, "ttft"), sets)
    tput = {}
    for name, s in (("hits", hits), ("misses", misses)):
        tput[name] = MEASURED_TOKENS / (s["last_release_s"] - MEASURED_FROM_S)
    host = hits["offload"]["tiers"][0]
    computed_ms = float(ttft[0]["ttft_s"]) * 1e3
    reloaded_ms = float(ttft[2]["ttft_s"]) * 1e3
    t_ratio = tput["hits"] / tput["misses"]
    f_ratio = computed_ms / reloaded_ms
    print(f"{'':40}{'published':>10}{'servesim':>10}")
    print(f"{'prompt tokens/s, 0% CPU hits':40}{'':>10}{tput['misses']:>10.0f}")
    print(f"{'prompt tokens/s, 100% CPU hits':40}{'':>10}{tput['hits']:>10.0f}")
    print(f"measured batch: {host['hit_tokens']:,} of its {MEASURED_TOKENS:,} prompt tokens "
          f"from the host tier, {hits['prefix_cache']['hit_tokens']} from the GPU")
    print(f"{'throughput, 100% over 0% hits':40}{PUBLISHED['throughput_ratio']:>9.1f}x"
          f"{t_ratio:>9.2f}x")
    print(f"error: {100 * (t_ratio / PUBLISHED['throughput_ratio'] - 1):+.1f}%")
    print(f"{'TTFT 512 tokens computed, ms':40}{'':>10}{computed_ms:>10.2f}")
    print(f"{'TTFT 512 tokens from CPU, ms':40}{'':>10}{reloaded_ms:>10.2f}")
    print(f"{'TTFT, computed over loaded':40}{PUBLISHED['ttft_ratio']:>9.1f}x{f_ratio:>9.2f}x")
    print(f"error: {100 * (f_ratio / PUBLISHED['ttft_ratio'] - 1):+.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
