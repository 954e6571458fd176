#!/usr/bin/env python3
"""Check the rule servesim uses for attention head layouts the tables did not measure
(docs/config.md#head-layouts-the-tables-did-not-measure): a layout of H query / K KV heads is
timed as the measured layout of the same head_dim and group size H / K with K' KV heads, at
K / K' times the batch. TensorRT-LLM's tables in this repository measured both sides of several
such pairs, so the rule can be scored on them: for every (batch, length) measured in both, the
ratio of the layout's own time to the rule's. Nothing is fitted; the rule has no parameter.

With --groups, the rule for a group size no table measured (Mixtral-8x22B at TP8: 6 query heads
per KV head, where vLLM's tables hold 4 and 8): linear in the group size between the nearest
measured groups below and above, at the same KV heads. Scored by leaving out each measured group
that has measured neighbours on both sides and reading it from them, on every cell all three
measured. Nothing is fitted either.

usage: python3 scripts/check_attention_layouts.py [--groups]   (reads data/timings/aiconfigurator)
"""
import collections
import csv
import gzip
import os
import statistics
import sys

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


def groups():
    print("| GPU | engine | attention | layouts left out | cells | median own / rule "
          "| mean abs error | p10 - p90 | worst layout (mean abs error) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for gpu in ("h100_sxm", "rtx_pro_6000_server"):
        for engine in ("vllm-0.19.0", "trtllm-1.3.0rc20"):
            for kind in ("generation_attention", "context_attention"):
                path = os.path.join(TABLES, gpu, engine, kind + ".csv.gz")
                if not os.path.exists(path):
                    continue
                t = read(path)
                ratios, layouts, worst = [], 0, (0.0, "")
                for kv in sorted({k for d, h, k in t if d == 128}):
                    gs = sorted(h // kv for d, h, k in t if d == 128 and k == kv and h % kv == 0)
                    for lo, g, hi in zip(gs, gs[1:], gs[2:]):
                        a, b, c = t[(128, lo * kv, kv)], t[(128, g * kv, kv)], t[(128, hi * kv, kv)]
                        w = (g - lo) / (hi - lo)
                        r = [v / ((1 - w) * a[x] + w * c[x]) for x, v in b.items()
                             if x in a and x in c]
                        if not r:
                            continue
                        layouts += 1
                        ratios += r
                        e = statistics.mean(abs(q - 1) for q in r) * 100
                        if e > worst[0]:
                            worst = (e, f"{g * kv}/{kv} from {lo * kv}/{kv}, {hi * kv}/{kv}")
                if not ratios:
                    continue
                ratios.sort()
                err = statistics.mean(abs(r - 1) for r in ratios) * 100
                print(f"| {gpu} | {engine.split('-')[0]} | {kind.split('_')[0]} | {layouts} | "
                      f"{len(ratios)} | {statistics.median(ratios):.3f} | {err:.1f}% | "
                      f"{ratios[len(ratios) // 10]:.3f} - {ratios[9 * len(ratios) // 10]:.3f} | "
                      f"{worst[1]} ({worst[0]:.1f}%) |")


def main():
    if sys.argv[1:] == ["--groups"]:
        groups()
        return
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
