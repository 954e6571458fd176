#!/usr/bin/env python3
"""Replay the four measured vLLM 0.19 runs (shared/data/serving-runs/vllm-0.19) with the operator
model instead of the layer profiles, nothing else changed (scripts/validate_vllm.py's replay:
the same trace, vllm scheduler, KV and prefix caching), and print the mean TTFT / TPOT / E2E
errors beside the layer-profile replay's, the old roofline's (kind: roofline, its defaults 0.8 /
0.6) and the peer simulator's (validation/summary.txt). For the RTX PRO 6000 runs the shape-aware
roofline fitted without that GPU's tables (fit-without-rtx_pro_6000_server) is a further column.

Operator model: AIConfigurator's RTX PRO 6000 tables (rtx_pro_6000_server, vllm) for the three
RTX PRO 6000 runs; the RTX 4090 has no table, so its run uses the shape-aware roofline
(operators.source: roofline, fit-all) with the catalogue's rtx-4090. bf16 weights and KV as the
runs. The Qwen3-30B-A3B run is two data-parallel ranks with expert parallelism, replayed as one
replica; the operator model has no data parallelism, so it is priced as tensor_parallel 2,
expert_parallel 2 (attention split over the two GPUs as the ranks split the batch, plus the
all-reduces a TP2 group would run, which the DP run does not).

usage: scripts/replay_vllm_operator.py [--servesim build/servesim] [--data ../shared/data]
"""
import argparse
import os
import statistics
import tempfile

import validate_vllm as vv

import shared_data  # scripts/shared_data.py: the --data folder, or a clear message

RUNS = [  # gpu folder, model folder, catalogue model, hardware, operators, tp, ep
    ("RTXPRO6000", "Llama-3.1-8B", "llama-3.1-8b", "rtx-pro-6000", "tables", 1, 1),
    ("RTXPRO6000", "Qwen3-32B", "qwen3-32b", "rtx-pro-6000", "tables", None, 1),
    ("RTXPRO6000", "Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b", "rtx-pro-6000", "tables", 2, 2),
    ("RTX4090", "Llama-3.1-8B", "llama-3.1-8b", "rtx-4090", "roofline", 1, 1),
]


def mean_errors(run, peer):
    rows = vv.latencies(run)
    out = {}
    for name, m, s in (("TTFT", "m_ttft", "s_ttft"), ("TPOT", "m_tpot", "s_tpot"),
                       ("E2E", "m_e2e", "s_e2e")):
        mv = statistics.mean(r[m] for r in rows if r[m] is not None)
        sv = statistics.mean(r[s] for r in rows if r[s] is not None)
        out[name] = (mv, (sv - mv) / mv * 100)
    return out


def main():
    ap = argparse.ArgumentParser()
    vv.add_options(ap)
    a = ap.parse_args()
    shared_data.require(a.data, __file__)
    print("| run | metric | vLLM mean (ms) | layer profiles | operator model |"
          " shape roofline LOGO | old roofline | peer |")
    print("|---|---|---|---|---|---|---|---|")
    for gpu, model, cat, hw, source, tp, ep in RUNS:
        work = tempfile.mkdtemp()
        a.set = []
        base = vv.replay(a, gpu, model, os.path.join(work, "profile"))
        tp = tp or base["tp"]
        if source == "tables":
            ops = (f"{{source: tables, path: {os.path.abspath(a.data)}/timings/aiconfigurator, "
                   f"gpu: rtx_pro_6000_server, engine: vllm}}")
        else:
            ops = "{source: roofline, fit: fit-all}"
        a.set = [f"step_time={{kind: operator, model: {cat}, hardware: {hw}, tensor_parallel: "
                 f"{tp}{f', expert_parallel: {ep}' if ep > 1 else ''}, weight_dtype: bf16, kv_dtype: bf16, "
                 f"operators: {ops}}}"]
        op = vv.replay(a, gpu, model, os.path.join(work, "operator"))
        logo = None
        if source == "tables":  # the shape roofline fitted without the RTX PRO 6000's tables
            a.set = [a.set[0].replace(ops, "{source: roofline, fit: fit-without-rtx_pro_6000_server}")]
            logo = mean_errors(vv.replay(a, gpu, model, os.path.join(work, "logo")), peer=None)
        a.set = [f"step_time={{kind: roofline, model: {cat}, hardware: {hw}, tensor_parallel: "
                 f"{tp}, weight_dtype: bf16}}"]
        old = vv.replay(a, gpu, model, os.path.join(work, "roofline"))
        peer = vv.peer_figures(f"{base['run_dir']}/validation/summary.txt")
        be, oe, re_ = mean_errors(base, peer), mean_errors(op, peer), mean_errors(old, peer)
        label = f"{gpu} {model} ({'tables' if source == 'tables' else 'shape roofline, no table'})"
        for name, key in (("TTFT", "TTFT"), ("TPOT", "TPOT"), ("E2E", "Latency")):
            p = peer.get((key, "Mean"))
            print(f"| {label} | {name} | {be[name][0]:.1f} | {be[name][1]:+.1f}% | "
                  f"{oe[name][1]:+.1f}% | {'as operator' if logo is None else f'{logo[name][1]:+.1f}%'} | {re_[name][1]:+.1f}% | {'' if p is None else f'{p:+.1f}%'} |")


if __name__ == "__main__":
    main()
