#!/usr/bin/env python3
"""servesim's multi-LoRA throughput against vLLM's published one (docs/lora.md).

The figure: vllm-project/vllm pull request 11267 ran benchmark_throughput.py on one A100 with
Llama-2-7b-hf and 1,000 ShareGPT prompts: 2693.62 output tokens/s without LoRA, 1787.78 with one
rank-8 adapter (--max-loras 1) and 1791.53 with --max-loras 4 (request ids drawn from 1 to 4).
This runs configs/examples/lora-published-vllm-a100.yaml (one adapter), with four adapter ids
and four slots, and without LoRA, and prints servesim's throughputs and LoRA-to-base ratios
beside the published ones.

  python3 scripts/lora_published_check.py [--servesim build/servesim]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "configs/examples/lora-published-vllm-a100.yaml")
PUBLISHED = {"base": 2693.62, "one": 1787.78, "four": 1791.53}
RUNS = {
    "base": ["--set", "lora.enabled=false"],
    "one": [],
    "four": ["--set", "lora.adapters=4", "--set", "lora.max_loras=4",
             "--set", "lora.max_cpu_loras=4"],
}
LABELS = {"base": "no LoRA", "one": "1 adapter, max_loras 1", "four": "4 ids, max_loras 4"}


def run(servesim, out, extra):
    subprocess.run([servesim, "run", CONFIG, "--out", out, "--quiet", "--no-progress"] + extra,
                   check=True)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servesim", default=os.path.join(ROOT, "build/servesim"))
    args = ap.parse_args()
    tput = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in RUNS.items():
            tput[name] = run(args.servesim, os.path.join(tmp, name), extra)["output_tokens_per_s"]
    print(f"{'output tokens/s':26}{'published':>10}{'servesim':>10}")
    for name in RUNS:
        print(f"{LABELS[name]:26}{PUBLISHED[name]:>10.2f}{tput[name]:>10.1f}")
    for name in ("one", "four"):
        pub = PUBLISHED[name] / PUBLISHED["base"]
        sim = tput[name] / tput["base"]
        print(f"LoRA / base, {LABELS[name]}: published {pub:.3f}, servesim {sim:.3f}, "
              f"error {100 * (sim / pub - 1):+.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
