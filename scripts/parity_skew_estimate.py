#!/usr/bin/env python3
"""How much step time would the peer simulator's attention skew correction add to a replay?

LLMServingSim looks attention up at the decodes' mean KV length, as servesim does, and then
adds alpha x (t(max KV) - t(mean KV)) per layer, where t is the profiled attention time and
alpha is fitted by its profiler to steps with uneven KV lengths (meta.yaml: skew_fit, per
tensor-parallel degree; alpha_default is the pooled fit; the per-bucket table skew_fit.csv is
not in ../shared/data). servesim's StepShape carries the decodes' total KV but not their longest,
so it cannot apply the correction. This script estimates it offline: it replays the run as
scripts/validate_vllm.py does (same options), rebuilds every step's decoding requests and their
KV lengths from requests.csv and steps.csv (exact when nothing is preempted: each request decodes
in every step from its first token to its last), and sums alpha_default x layers x (t(max) -
t(mean)) over the steps, with the profile interpolated multilinearly as servesim's
layer_profile model does (prefix KV of the prefill chunks taken as 0).

usage: scripts/parity_skew_estimate.py --gpu RTXPRO6000 --model Llama-3.1-8B [--servesim ...]
Dense runs without data parallelism only.
"""
import argparse
import bisect
import csv
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate_vllm as vv  # noqa: E402

AXES = ("prefill_chunk", "kv_prefill", "n_decode", "kv_decode")


def alpha_default(meta_yaml, tp):
    """skew_fit.per_tp.<tp>.alpha_default, or None where the profile has no skew fit."""
    text = open(meta_yaml).read()
    m = re.search(r"^skew_fit:\n((?:[ ].*\n)*)", text, re.M)
    if not m or re.search(r"^  enabled: false", m.group(1), re.M):
        return None
    block = re.search(rf"^    {tp}:\n((?:      .*\n)*)", m.group(1), re.M)
    a = block and re.search(r"alpha_default: ([\d.]+)", block.group(1))
    return float(a.group(1)) if a else None


class Attention:
    def __init__(self, path):
        rows = list(csv.DictReader(open(path)))
        self.axes = [sorted({float(r[k]) for r in rows}) for k in AXES]
        self.grid = {tuple(self.axes[d].index(float(r[k])) for d, k in enumerate(AXES)):
                     float(r["time_us"]) for r in rows}

    def at(self, q):
        lo, hi, fr = [0] * 4, [0] * 4, [0.0] * 4
        for d in range(4):
            a = self.axes[d]
            if len(a) == 1 or q[d] <= a[0]:
                continue
            i = min(bisect.bisect_left(a, q[d]), len(a) - 1)
            hi[d], lo[d] = i, i - 1
            fr[d] = (q[d] - a[lo[d]]) / (a[hi[d]] - a[lo[d]])
        total = weight = 0.0
        for corner in range(16):
            key, w = [], 1.0
            for d in range(4):
                up = corner >> d & 1
                if lo[d] == hi[d] and up:
                    w = 0
                    break
                key.append(hi[d] if up else lo[d])
                w *= 1 if lo[d] == hi[d] else (fr[d] if up else 1 - fr[d])
            v = self.grid.get(tuple(key)) if w else None
            if v is not None:
                total += w * v
                weight += w
        return total / weight if weight > 1e-9 else 0.0


def main():
    ap = argparse.ArgumentParser()
    vv.add_options(ap)
    ap.add_argument("--gpu", default="RTXPRO6000")
    ap.add_argument("--model", default="Llama-3.1-8B")
    a = ap.parse_args()
    run = vv.replay(a, a.gpu, a.model, a.keep or tempfile.mkdtemp(), steps=True)
    if run["dp"] > 1:
        sys.exit("data-parallel runs split each step over ranks; not estimated")
    spec = vv.MODELS[a.model]
    prof = f"{a.data}/timings/llmservingsim/perf/{a.gpu}/{spec['hf']}/bf16"
    alpha = alpha_default(f"{prof}/meta.yaml", run["tp"])
    if alpha is None:
        print(f"{a.gpu} / {a.model}: the profile has no skew fit (skew_fit disabled): the peer "
              "applies no correction")
        return
    attn = Attention(f"{prof}/tp{run['tp']}/attention.csv")
    steps = list(csv.DictReader(open(os.path.join(run["out_dir"], "steps.csv"))))
    starts = [float(s["start_s"]) for s in steps]
    ends = [float(s["start_s"]) + float(s["duration_s"]) for s in steps]
    kv = [[] for _ in steps]
    for r in run["sim"].values():
        i = bisect.bisect_left(starts, float(r["first_token_s"]) - 1e-10)
        k = 1
        while i < len(steps) and ends[i] <= float(r["finish_s"]) + 1e-10:
            kv[i].append(int(r["prompt_tokens"]) + k)  # its context plus the token it computes
            k += 1
            i += 1
    if any(len(d) != int(s["decode_tokens"]) for s, d in zip(steps, kv)):
        sys.exit("the rebuilt decodes do not match steps.csv (preemption?): not estimated")
    busy = sum(float(s["duration_s"]) for s in steps)
    added = 0.0
    for s, d in zip(steps, kv):
        if len(d) < 2:
            continue
        pc = int(s["prefill_tokens"])
        t_mean = attn.at([pc, 0, len(d), sum(d) / len(d)])
        t_max = attn.at([pc, 0, len(d), max(d)])
        added += alpha * max(0.0, t_max - t_mean) * spec["layers"] / 1e6
    print(f"{a.gpu} / {a.model}: alpha_default {alpha} (tp{run['tp']}), {len(steps)} steps, "
          f"busy {busy:.2f} s; the skew correction would add {added:.2f} s "
          f"({added / busy * 100:.1f}% of the busy time)")


if __name__ == "__main__":
    main()
