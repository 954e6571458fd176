#!/usr/bin/env python3
"""Replay every measured vLLM 0.19 run of the collection (shared/data/serving-runs/vllm-0.19/
GPU/MODEL: four today) with the operator model instead of the layer profiles, nothing else
changed (scripts/validate_vllm.py's replay: the same trace, vllm scheduler, KV and prefix
caching), and print the mean TTFT / TPOT / E2E errors beside the layer-profile replay's, the old
roofline's (kind: roofline, its defaults 0.8 / 0.6) and the peer simulator's
(validation/summary.txt). For a GPU with tables the shape-aware roofline fitted without them
(fit-without-GPU) is a further column.

Each run's model (meta.json) and accelerator (config.json: "RTXPRO6000", "RTX4090") are matched
to the catalogue (scripts/catalogue.py). Operator model: the accelerator's AIConfigurator tables
(its catalogue entry's `tables`: rtx_pro_6000_server, vllm, for the three RTX PRO 6000 runs);
one without (the RTX 4090) uses the shape-aware roofline (operators.source: roofline, fit-all)
with its catalogue entry. bf16 weights and KV as the runs. The Qwen3-30B-A3B run is two data-parallel ranks with expert parallelism, replayed as one
replica; the operator model has no data parallelism, so it is priced as tensor_parallel 2,
expert_parallel 2 (attention split over the two GPUs as the ranks split the batch, plus the
all-reduces a TP2 group would run, which the DP run does not).

usage: scripts/replay_vllm_operator.py [--servesim build/servesim] [--data ../shared/data]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import catalogue  # scripts/catalogue.py: the catalogue as the scripts read it
import validate_vllm as vv

import shared_data  # scripts/shared_data.py: the --data folder, or a clear message

def run_settings(data, gpu, model):
    """(catalogue model, hardware, its operator tables or None, tp, ep) of a run folder: the
    model from meta.json, the accelerator from config.json, both matched to the catalogue
    (scripts/catalogue.py); data-parallel ranks with expert parallelism priced as one tensor-
    and expert-parallel group over all their GPUs."""
    run_dir = os.path.join(data, vv.RUNS_DIR, gpu, model)
    meta_all = json.load(open(os.path.join(run_dir, "vllm", "meta.json")))
    cfg = json.load(open(os.path.join(run_dir, "config.json")))
    inst = cfg["nodes"][0]["instances"][0]
    hw, why = catalogue.match(inst["hardware"], "hardware")
    if why:
        sys.exit(f"{run_dir}/config.json: hardware {inst['hardware']!r}: {why}")
    tables = catalogue.catalogue("hardware")[hw].get("tables")
    meta = meta_all["engine_kwargs"]
    tp, dp = int(inst["tp_size"]), int(meta.get("data_parallel_size") or 1)
    ep = 1
    if meta.get("enable_expert_parallel") and dp > 1:
        tp = ep = tp * dp
    return (vv.run_model(meta_all, run_dir)["name"], hw,
            None if tables in (None, "none") else tables, tp, ep)


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
    for gpu, model in vv.runs(a.data):
        cat, hw, tables, tp, ep = run_settings(a.data, gpu, model)
        source = "tables" if tables else "roofline"
        work = tempfile.mkdtemp()
        a.set = []
        base = vv.replay(a, gpu, model, os.path.join(work, "profile"))
        if source == "tables":
            ops = (f"{{source: tables, path: {os.path.abspath(a.data)}/timings/aiconfigurator, "
                   f"gpu: {tables}, engine: vllm}}")
        else:
            ops = "{source: roofline, fit: fit-all}"
        a.set = [f"step_time={{kind: operator, model: {cat}, hardware: {hw}, tensor_parallel: "
                 f"{tp}{f', expert_parallel: {ep}' if ep > 1 else ''}, weight_dtype: bf16, kv_dtype: bf16, "
                 f"operators: {ops}}}"]
        op = vv.replay(a, gpu, model, os.path.join(work, "operator"))
        logo = None
        if source == "tables":  # the shape roofline fitted without this GPU's tables
            a.set = [a.set[0].replace(ops, f"{{source: roofline, fit: fit-without-{tables}}}")]
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
