#!/usr/bin/env python3
"""servesim's speculative-decoding speedup against a published one (docs/speculative.md).

The figure: vLLM's EAGLE-3 for Llama 3.1 8B Instruct at batch size 1 on MT-bench with k = 3,
an acceptance length of 2.79 tokens per verify and a TPOT of 4.09 ms against 7.07 ms without
speculation (vllm-project/vllm issue 20780, the table "TPOT ms, BS 1"): a 1.729x speedup.
This runs configs/examples/speculative-eagle3-bs1-llama-3.1-8b-h100.yaml with and without its
`speculative` section and prints servesim's TPOTs, its speedup and the error against the figure.

  python3 scripts/spec_decode_check.py [--servesim build/servesim]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "configs/examples/speculative-eagle3-bs1-llama-3.1-8b-h100.yaml")
PUBLISHED = {"tpot_plain_ms": 7.07, "tpot_spec_ms": 4.09, "acceptance_length": 2.79}


def run(servesim, out, extra):
    subprocess.run([servesim, "run", CONFIG, "--out", out, "--quiet", "--no-progress"] + extra,
                   check=True)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servesim", default=os.path.join(ROOT, "build/servesim"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        spec = run(args.servesim, os.path.join(tmp, "spec"), [])
        plain = run(args.servesim, os.path.join(tmp, "plain"),
                    ["--set", "speculative.enabled=false"])
    tpot_spec = spec["tpot_s"]["mean"] * 1e3
    tpot_plain = plain["tpot_s"]["mean"] * 1e3
    speedup = tpot_plain / tpot_spec
    published = PUBLISHED["tpot_plain_ms"] / PUBLISHED["tpot_spec_ms"]
    s = spec["speculative"]
    print(f"{'':26}{'published':>10}{'servesim':>10}")
    print(f"{'tokens per verify':26}{PUBLISHED['acceptance_length']:>10.2f}"
          f"{s['tokens_per_verify']:>10.2f}")
    print(f"{'TPOT without, ms':26}{PUBLISHED['tpot_plain_ms']:>10.2f}{tpot_plain:>10.2f}")
    print(f"{'TPOT with EAGLE-3 k=3, ms':26}{PUBLISHED['tpot_spec_ms']:>10.2f}{tpot_spec:>10.2f}")
    print(f"{'speedup':26}{published:>10.3f}{speedup:>10.3f}")
    print(f"error of servesim's speedup: {100 * (speedup / published - 1):+.1f}%")
    print(f"proposer share of busy time: {100 * s['proposer_share']:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
