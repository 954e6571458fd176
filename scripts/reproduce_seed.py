#!/usr/bin/env python3
"""Reproduce the seed experiment (docs/reproductions.md): 200 chat requests with replies of 8 to
256 tokens, at most 8 at once, decode step 6.3 ms at 1 sequence and 9.3 ms at 8, under
continuous and static batching, across arrival assumptions and seeds.

usage: scripts/reproduce_seed.py [--servesim build/servesim] [--seeds 1,2,3,4,5]
Prints a Markdown table. Needs python3 and a built servesim.
"""
import argparse
import json
import statistics
import subprocess
import tempfile

CONFIGS = {
    "continuous": "configs/examples/seed-continuous.yaml",
    "static": "configs/examples/seed-static.yaml",
}


def run(servesim, config, sets):
    with tempfile.TemporaryDirectory() as out:
        cmd = [servesim, "run", config, "--out", out, "--quiet"]
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True)
        with open(f"{out}/summary.json") as f:
            return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--rates", default="2,2.5,2.7,3,3.5,4,5,6")
    ap.add_argument("--prefill-ms-per-token", default=None,
                    help="override the configs' assumed prefill cost")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    arrivals = [(f"Poisson {r}/s", [f"workload.synthetic.arrival.rate_per_s={r}"])
                for r in a.rates.split(",")]
    arrivals.append(("all at t=0", ["workload.synthetic.arrival={kind: fixed, rate_per_s: 1e9}"]))
    print("| arrivals | continuous tokens/s | continuous median TTFT (ms) | static tokens/s | "
          "static median queue wait (s) |")
    print("|---|---|---|---|---|")
    for name, sets in arrivals:
        if a.prefill_ms_per_token is not None:
            sets = sets + [f"step_time.prefill_ms_per_token={a.prefill_ms_per_token}"]
        row = {}
        for kind, cfg in CONFIGS.items():
            res = [run(a.servesim, cfg, sets + [f"seed={s}"]) for s in seeds]
            tps = [r["output_tokens_per_s"] for r in res]
            key = "ttft_s" if kind == "continuous" else "queue_s"
            med = [r[key]["p50"] for r in res]
            row[kind] = (statistics.mean(tps), min(tps), max(tps),
                         statistics.mean(med), min(med), max(med))
        c, s = row["continuous"], row["static"]
        print(f"| {name} | {c[0]:.0f} ({c[1]:.0f}-{c[2]:.0f}) | {c[3]*1e3:.1f} "
              f"({c[4]*1e3:.1f}-{c[5]*1e3:.1f}) | {s[0]:.0f} ({s[1]:.0f}-{s[2]:.0f}) | "
              f"{s[3]:.2f} ({s[4]:.2f}-{s[5]:.2f}) |")


if __name__ == "__main__":
    main()
