#!/usr/bin/env python3
"""Check the rule servesim uses for attention head layouts the tables did not measure
(docs/config.md#head-layouts-the-tables-did-not-measure): a layout of H query / K KV heads is
timed as the measured layout of the same head_dim and group size H / K with K' KV heads, at
K / K' times the batch. TensorRT-LLM's tables in this repository measured both sides of several
such pairs, so the rule can be scored on them: for every (batch, length) measured in both, the
ratio of the layout's own time to the rule's. Nothing is fitted; the rule has no parameter.

usage: python3 scripts/check_attention_layouts.py   (reads data/timings/aiconfigurator)
"""
import collections
import csv
import gzip
import os
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLES = os.path.join(ROOT, "data", "timings", "aiconfigurator")
# (layout, the layout the rule reads it from, batch factor): multi-head ones first.
PAIRS = [((128, 32, 32), (128, 8, 8), 4), ((128, 16, 16), (128, 8, 8), 2),
         ((128, 64, 8), (128, 32, 4), 2), ((128, 32, 8), (128, 16, 4), 2)]


def read(path):
    col = "latency_ms_bfloat16_kv_bfloat16"
    t = collections.defaultdict(dict)
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            if r.get("window_size", "0") != "0" or not r.get(col):
                continue
            key = (int(r["head_dim"]), int(r["num_heads"]), int(r["num_key_value_heads"]))
            t[key][(int(r["batch_size"]), int(r["isl"]), int(r.get("step") or 0))] = float(r[col])
    return t


def main():
    print("| GPU | attention | layout | read as | cells | median own / rule | mean abs error "
          "| p10 - p90 |")
    print("|---|---|---|---|---|---|---|---|")
    for gpu in ("h100_sxm", "rtx_pro_6000_server"):
        for kind in ("generation_attention", "context_attention"):
            t = read(os.path.join(TABLES, gpu, "trtllm-1.3.0rc20", kind + ".csv.gz"))
            for big, small, scale in PAIRS:
                ratios = sorted(v / t[small][(b * scale, i, s)] for (b, i, s), v in t[big].items()
                                if (b * scale, i, s) in t[small])
                if not ratios:
                    continue
                err = statistics.mean(abs(r - 1) for r in ratios) * 100
                print(f"| {gpu} | {kind.split('_')[0]} | {big[1]}/{big[2]} x {big[0]} | "
                      f"{small[1]}/{small[2]} at {scale}x batch | {len(ratios)} | "
                      f"{statistics.median(ratios):.3f} | {err:.1f}% | "
                      f"{ratios[len(ratios) // 10]:.3f} - {ratios[9 * len(ratios) // 10]:.3f} |")


if __name__ == "__main__":
    main()
