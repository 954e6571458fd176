#!/usr/bin/env python3
"""Held-out error of servesim's decode-attention skew fit (`step_time.skew: fit`,
models/layer_profile.cpp: SkewFit) on LLMServingSim's skew.csv measurements.

Each skew.csv row times a decode batch of n sequences, nb of them at kv_big KV tokens and the
rest at kvs, uneven (t_skew_us) and uniform at the mean (t_mean_us) and at kv_big (t_max_us).
This script repeats servesim's fit in Python (the same arithmetic: a least-squares alpha per
(pc, n, nb / n, kv_big) cell, multilinear between cells in (log pc, log n, nb / n, log kv_big),
pc 0 (pure decode) a point of its own, clamped to the grid, never below 0) on training rows and predicts t_skew = t_mean + alpha (t_max - t_mean) on the
held-out rows, two ways:
  rows: 5 folds by row number (row i held out in fold i mod 5);
  kv:   every interior kvs value held out in turn (the fit must interpolate in kv_big).
Beside it: no correction (t_mean) and the profiler's pooled alpha from meta.yaml (fitted on all
rows, so not held out). Only the columns servesim reads are used (the files' alpha column is
empty on some rows; those are not).

usage: scripts/validate_skew.py [--data ../shared/data] [FILE.csv ...]
"""
import argparse
import bisect
import csv
import glob
import math
import os
import re

import shared_data  # scripts/shared_data.py: the --data folder, or a clear message


def read(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            n, nb = float(r["n"]), float(r["nb"])
            rows.append(dict(pc=float(r["pc"]), n=n, share=nb / n, kv_big=float(r["kv_big"]), kvs=float(r["kvs"]),
                             t_mean=float(r["t_mean_us"]), t_max=float(r["t_max_us"]),
                             t_skew=float(r["t_skew_us"])))
    return rows


def fit(train):
    sums, ge, gg, by_pc = {}, 0.0, 0.0, {}
    for d in train:
        g, e = d["t_max"] - d["t_mean"], d["t_skew"] - d["t_mean"]
        a, b = by_pc.get(d["pc"], (0.0, 0.0))
        by_pc[d["pc"]] = (a + g * e, b + g * g)
        k = (d["pc"], d["n"], d["share"], d["kv_big"])
        a, b = sums.get(k, (0.0, 0.0))
        sums[k] = (a + g * e, b + g * g)
        ge, gg = ge + g * e, gg + g * g
    cells = {k: a / b for k, (a, b) in sums.items() if b > 0}
    axes = [sorted({k[i] for k in sums}) for i in range(4)]
    pooled = max(0.0, ge / gg) if gg > 0 else 0.0
    pooled_pc = {p: a / b for p, (a, b) in by_pc.items() if b > 0}

    def bracket(ax, x, log):
        if log and ax[0] == 0:  # the prefill chunk: 0 (pure decode) is its own point
            return [(0.0, 1.0)] if x <= 0 else bracket(ax[1:], x, log) if len(ax) > 1 else []
        if x <= ax[0]:
            return [(ax[0], 1.0)]
        if x >= ax[-1]:
            return [(ax[-1], 1.0)]
        i = bisect.bisect_left(ax, x)
        if ax[i] == x:
            return [(x, 1.0)]
        f = math.log if log else (lambda v: v)
        t = (f(x) - f(ax[i - 1])) / (f(ax[i]) - f(ax[i - 1]))
        return [(ax[i - 1], 1 - t), (ax[i], t)]

    def alpha(pc, n, share, kv_big):
        s = w = 0.0
        for p, wp in bracket(axes[0], pc, True):
            for a, wa in bracket(axes[1], n, True):
                for b, wb in bracket(axes[2], share, False):
                    for c, wc in bracket(axes[3], kv_big, True):
                        wt = wp * wa * wb * wc
                        if (p, a, b, c) in cells and wt > 0:
                            s += wt * cells[(p, a, b, c)]
                            w += wt
        if w <= 1e-9:  # no profiled corner: the chunk's own pooled alpha, between chunks
            for p, wp in bracket(axes[0], pc, True):
                if p in pooled_pc:
                    s += wp * pooled_pc[p]
                    w += wp
        return max(0.0, s / w if w > 1e-9 else pooled)
    return alpha


def stats(pairs):
    rel = sorted(abs(p - m) / m for p, m in pairs)
    q = lambda f: rel[min(len(rel) - 1, int(f * len(rel)))] * 100  # noqa: E731
    signed = sum((p - m) / m for p, m in pairs) / len(pairs) * 100
    return (f"mean |err| {sum(rel) / len(rel) * 100:5.2f}%  p50 {q(.5):5.2f}%  p90 {q(.9):5.2f}%  "
            f"p99 {q(.99):5.2f}%  signed {signed:+.2f}%")


def pooled_alpha(path):
    """skew_fit.per_tp.<N>.alpha_default in the meta.yaml above tpN (read without a YAML lib)."""
    tp = os.path.basename(os.path.dirname(path))[2:]
    meta = os.path.join(os.path.dirname(os.path.dirname(path)), "meta.yaml")
    if not os.path.exists(meta):
        return None
    text = open(meta).read()
    m = re.search(r"\n    %s:\n(?:      .*\n)*?      alpha_default: ([\d.]+)" % tp, text)
    return float(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    if not a.files:
        shared_data.require(a.data, __file__)
    files = a.files or sorted(glob.glob(os.path.join(a.data, "timings/llmservingsim/perf/**/skew.csv"),
                                        recursive=True))
    for path in files:
        rows = read(path)
        print(f"{os.path.relpath(path, a.data) if not a.files else path} ({len(rows)} rows)")
        none = [(d["t_mean"], d["t_skew"]) for d in rows]
        print(f"  no correction         {stats(none)}")
        pa = pooled_alpha(path)
        if pa is not None:
            pairs = [(d["t_mean"] + pa * (d["t_max"] - d["t_mean"]), d["t_skew"]) for d in rows]
            print(f"  pooled alpha {pa:.4f}   {stats(pairs)}")
        folds = [([d for i, d in enumerate(rows) if i % 5 != k],
                  [d for i, d in enumerate(rows) if i % 5 == k]) for k in range(5)]
        kvs = sorted({d["kvs"] for d in rows})[1:-1]
        for name, split in (("rows", folds),
                            ("kv", [([d for d in rows if d["kvs"] != k],
                                     [d for d in rows if d["kvs"] == k]) for k in kvs])):
            pairs = []
            for train, test in split:
                alpha = fit(train)
                pairs += [(d["t_mean"] + alpha(d["pc"], d["n"], d["share"], d["kv_big"])
                           * (d["t_max"] - d["t_mean"]), d["t_skew"]) for d in test]
            print(f"  fit, held out by {name:<4} {stats(pairs)}")
            if name == "rows":
                pure = [pt for pt, d in zip(pairs, [d for _, t in split for d in t]) if d["pc"] == 0]
                base = [(d["t_mean"], d["t_skew"]) for d in rows if d["pc"] == 0]
                if pure:
                    print(f"    pure decode ({len(pure)}) {stats(pure)}  (no correction: "
                          f"{stats(base).split('%')[0]}%)")


if __name__ == "__main__":
    main()
