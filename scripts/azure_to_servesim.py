#!/usr/bin/env python3
"""Convert an Azure LLM inference trace (TIMESTAMP,ContextTokens,GeneratedTokens) to servesim's
CSV (arrival_s,prompt_tokens,output_tokens), arrivals relative to the first request.

usage: scripts/azure_to_servesim.py AZURE.csv OUT.csv [--rows N]
"""
import argparse
import csv
from datetime import datetime


def parse(ts: str) -> datetime:
    # "2023-11-16 18:15:46.6805900": Python takes at most 6 fractional digits.
    ts = ts.strip()
    if "." in ts:
        head, frac = ts.split(".", 1)
        ts = f"{head}.{frac[:6]}"
    return datetime.fromisoformat(ts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--rows", type=int, default=0, help="keep only the first N requests")
    a = ap.parse_args()
    with open(a.src, newline="") as f, open(a.dst, "w", newline="") as g:
        r = csv.DictReader(f)
        g.write("arrival_s,prompt_tokens,output_tokens\n")
        t0 = None
        for i, row in enumerate(r):
            if a.rows and i >= a.rows:
                break
            t = parse(row["TIMESTAMP"])
            t0 = t0 or t
            g.write(f"{(t - t0).total_seconds():.6f},{int(row['ContextTokens'])},"
                    f"{int(row['GeneratedTokens'])}\n")


if __name__ == "__main__":
    main()
