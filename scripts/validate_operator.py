#!/usr/bin/env python3
"""Step-level check of `step_time.kind: operator` against measured whole steps and static
batches, with nothing fitted to them. Three step models side by side: the GPU's own AIConfigurator
tables, the shape-aware roofline fitted without that GPU's tables (operators.source: roofline,
fit: fit-without-<gpu>: leave one GPU out), and the old `kind: roofline` with its defaults.

  1. Whole steps, through `servesim calibrate --check`:
     - Llama-3.1-8B TP1 on RTX PRO 6000 (vLLM 0.19 tables) against the steps composed from
       LLMServingSim's vLLM layer profiles of that GPU (decodes at KV up to 8,192, prefill
       chunks, mixed steps: the profile's own grid);
     - Llama-2-70B TP4 on H100 (vLLM and TRT-LLM tables) against Splitwise's measured prefill
       and decode steps (perf_model.csv).
  2. Argonne LLM-Inference-Bench's static batches (All_results.csv: A100 and H100, vLLM and
     TensorRT-LLM, the catalogue's models): the whole batch's latency, one prefill of the batch
     then its decode steps, as servesim's static scheduler runs it.

usage: scripts/validate_operator.py [--servesim build/servesim] [--data ../shared/data]
                                    [--skip-argonne]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

CASES = [
    ("Llama-3.1-8B TP1, RTX PRO 6000, vLLM 0.19 tables vs LLMServingSim layer profiles",
     "llama-3.1-8b", "rtx-pro-6000", 1, "rtx_pro_6000_server", "vllm",
     ["timings/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/tp1",
      "--layers", "32", "--max-kv-per-seq", "8192"]),
    ("Llama-2-70B TP4, H100, vLLM 0.19 tables vs Splitwise", "llama-2-70b", "h100-sxm", 4,
     "h100_sxm", "vllm",
     ["timings/splitwise/perf_model.csv", "--model", "llama2-70b", "--hardware", "h100-80gb",
      "--tp", "4"]),
    ("Llama-2-70B TP4, H100, TRT-LLM 1.3 tables vs Splitwise", "llama-2-70b", "h100-sxm", 4,
     "h100_sxm", "trtllm",
     ["timings/splitwise/perf_model.csv", "--model", "llama2-70b", "--hardware", "h100-80gb",
      "--tp", "4"]),
]


STEP_MODELS = ["own table", "shape roofline LOGO", "old roofline"]


# --host-time: the measuring engine's host time a step (issue 21), as step_time.cpu_overhead:
# serial (vLLM V0, the engine these measurements ran: every part on the critical path) or
# overlap (only sampling exposed; the rest hides under steps this long). Constants from
# scripts/host_time_constants.py (Vidur's A100 cpu_overheads.csv), never from these checks.
HOST = {"mode": "off", "overhead": None}


def host_overhead(data, mode):
    import host_time_constants as htc
    parts, _, _ = htc.constants(data)
    names = ["sample"] if mode == "overlap" else list(parts)
    return (sum(parts[n][0] for n in names), sum(parts[n][1] for n in names))


def step_time_yaml(which, model, hw, tp, gpu, engine, data, dtype="bf16", host_engine="vllm"):
    """The step_time section for one of STEP_MODELS (the roofline's LOGO fit leaves `gpu` out)."""
    head = f"model: {model}\nhardware: {hw}\ntensor_parallel: {tp}\nweight_dtype: {dtype}\n"
    if HOST["overhead"] and host_engine == "vllm":  # no public host profile of TRT-LLM's C++ runtime
        per_step, per_seq = HOST["overhead"]
        head += f"cpu_overhead: {{per_step_ms: {per_step:.6g}, per_sequence_ms: {per_seq:.6g}}}\n"
    if which == "own table":
        return (f"kind: operator\n{head}operators: {{source: tables, path: "
                f"{data}/timings/aiconfigurator, gpu: {gpu}, engine: {engine}}}\n")
    if which == "shape roofline LOGO":
        return f"kind: operator\n{head}operators: {{source: roofline, fit: fit-without-{gpu}}}\n"
    return f"kind: roofline\n{head}"  # the old model: efficiencies 0.8 / 0.6 (documented defaults)


def step_checks(a, data, tmp):
    print("| case | steps | " + " | ".join(f"{m} MAPE (mean error)" for m in STEP_MODELS) + " |")
    print("|---|---|" + "---|" * len(STEP_MODELS))
    for title, model, hw, tp, gpu, engine, measured in CASES:
        got = {}
        for which in STEP_MODELS:
            cfg = os.path.join(tmp, "step_time.yaml")
            with open(cfg, "w") as f:
                # Host time belongs to measured whole steps (Splitwise), not to steps composed
                # from kernel profiles (LLMServingSim).
                host = "vllm" if "splitwise" in measured[0] else "none"
                f.write(step_time_yaml(which, model, hw, tp, gpu, engine, data, host_engine=host))
            args = [a.servesim, "calibrate", os.path.join(data, measured[0])] + measured[1:]
            r = subprocess.run(args + ["--check", cfg], capture_output=True, text=True)
            if r.returncode != 0:
                got[which] = {"all": "error: " + r.stderr.strip().splitlines()[-1][:80]}
                continue
            for line in r.stdout.splitlines():
                parts = line.split()
                for kind in ("all", "decode only", "prefill only", "mixed"):
                    words = kind.split()
                    if parts[:len(words)] == words and len(parts) == len(words) + 4:
                        n, mape, _, mean = parts[len(words):]
                        got.setdefault(which, {})[kind] = f"{mape} ({mean})"
                        got.setdefault("n", {})[kind] = n
        for kind in ("all", "decode only", "prefill only", "mixed"):
            if kind not in got.get("n", {}):
                continue
            cells = [got.get(w, {}).get(kind, "") for w in STEP_MODELS]
            print(f"| {title}: {kind} | {got['n'][kind]} | " + " | ".join(cells) + " |")
    print()


# Argonne LLM-Inference-Bench static batches: (hardware column, catalogue name, table folder).
# Argonne's A100s are taken as the 40 GB SXM part (the weight check only; the tables are
# a100_sxm's either way) and its H100s as SXM; Meta-Llama-3-8B has Llama-3.1-8B's shapes.
# Lengths are the column "Input Output Length", used for both; precision fp16 (bf16 tables).
ARGONNE_HW = [("Nvidia A100 GPU", "a100-40gb", "a100_sxm"), ("Nvidia H100 GPU", "h100-sxm", "h100_sxm")]
ARGONNE_MODELS = {"meta-llama/Llama-2-7b-hf": "llama-2-7b", "meta-llama/Llama-2-70b-hf": "llama-2-70b",
                  "meta-llama/Meta-Llama-3-8B": "llama-3.1-8b",
                  "mistralai/Mistral-7B-v0.1": "mistral-7b"}
ARGONNE_ENGINES = {"vLLM": "vllm", "TensorRT-LLM": "trtllm"}


def batch_latency(a, tmp, step_time, batch, length):
    """Whole static batch: one prefill of `batch` prompts of `length`, then length - 1 decodes."""
    cfg = os.path.join(tmp, "argonne.yaml")
    indented = "".join("  " + line + "\n" for line in step_time.splitlines())
    with open(cfg, "w") as f:
        f.write(f"workload:\n  synthetic:\n    requests: {batch}\n"
                f"    arrival: {{kind: poisson, rate_per_s: 1e9}}\n"
                f"    prompt_tokens: {{kind: fixed, value: {length}}}\n"
                f"    output_tokens: {{kind: fixed, value: {length}}}\n"
                f"step_time:\n{indented}"
                f"scheduler: {{kind: static, max_batch_size: {batch}}}\n"
                f"kv: {{policy: paged, block_size: 16, capacity_tokens: 100000000}}\nseed: 1\n")
    out = os.path.join(tmp, "argonne")
    r = subprocess.run([a.servesim, "run", cfg, "--out", out, "--quiet", "--no-requests-csv",
                        "--no-progress"], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return s["last_release_s"] - s["first_arrival_s"]


def argonne(a, data, tmp):
    with open(os.path.join(data, "timings/argonne-llm-inference-bench/All_results.csv")) as f:
        rows = list(csv.DictReader(f))
    groups = {}
    for r in rows:
        hw = [h for h in ARGONNE_HW if h[0] == r["Hardware"]]
        if not hw or r["Model"] not in ARGONNE_MODELS or r["Framework"] not in ARGONNE_ENGINES:
            continue
        key = (hw[0], ARGONNE_ENGINES[r["Framework"]], ARGONNE_MODELS[r["Model"]],
               int(r["Num of Hardware"]))
        groups.setdefault(key, []).append(r)
    print("| GPU | engine | model | TP | batches | " + " | ".join(
        f"{m} MAPE (mean error)" for m in STEP_MODELS) + " |")
    print("|---|---|---|---|---|" + "---|" * len(STEP_MODELS))
    every = {m: [] for m in STEP_MODELS}
    common = {m: [] for m in STEP_MODELS}  # batches every model predicts
    for (hw, engine, model, tp), rs in sorted(groups.items()):
        errs = {m: [] for m in STEP_MODELS}
        skipped = {m: 0 for m in STEP_MODELS}
        for r in rs:
            meas = float(r["Latency"])
            got = {}
            for m in STEP_MODELS:
                st = step_time_yaml(m, model, hw[1], tp, hw[2], engine, data, host_engine=engine)
                p = batch_latency(a, tmp, st, int(r["Batch Size"]), int(r["Input Output Length"]))
                if p is None:
                    skipped[m] += 1
                    continue
                errs[m].append((p - meas) / meas * 100)
                got[m] = errs[m][-1]
            if len(got) == len(STEP_MODELS):
                for m in STEP_MODELS:
                    common[m].append(got[m])
        cells = []
        for m in STEP_MODELS:
            e = errs[m]
            every[m] += e
            if not e:
                cells.append("refused (" + str(skipped[m]) + ")")
                continue
            cells.append(f"{sum(abs(x) for x in e) / len(e):.1f}% ({sum(e) / len(e):+.1f}%)"
                         + (f", {skipped[m]} refused" if skipped[m] else ""))
        print(f"| {hw[0]} | {engine} | {model} | {tp} | {len(rs)} | " + " | ".join(cells) + " |")
    print("| all | | | | | " + " | ".join(
        f"{sum(abs(x) for x in every[m]) / max(1, len(every[m])):.1f}% over {len(every[m])}"
        for m in STEP_MODELS) + " |")
    print(f"| all, the {len(common[STEP_MODELS[0]])} batches every model predicts | | | | | "
          + " | ".join(f"{sum(abs(x) for x in common[m]) / max(1, len(common[m])):.1f}% "
                       f"({sum(common[m]) / max(1, len(common[m])):+.1f}%)" for m in STEP_MODELS)
          + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--skip-argonne", action="store_true")
    ap.add_argument("--host-time", choices=["off", "serial", "overlap"], default="off",
                    help="add the measuring engine's host time a step (issue 21) to the measured "
                         "whole steps' and vLLM batches' predictions: serial (vLLM V0) or overlap")
    a = ap.parse_args()
    data = os.path.abspath(a.data)
    if a.host_time != "off":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        HOST["overhead"] = host_overhead(data, a.host_time)
        print(f"host time ({a.host_time}): cpu_overhead per_step_ms {HOST['overhead'][0]:.4f}, "
              f"per_sequence_ms {HOST['overhead'][1]:.5f} on Splitwise's steps and vLLM's "
              "Argonne batches\n")
    with tempfile.TemporaryDirectory() as tmp:
        print("## Whole steps (servesim calibrate --check)\n")
        step_checks(a, data, tmp)
        if not a.skip_argonne:
            print("## Argonne LLM-Inference-Bench static batches (whole-batch latency)\n")
            argonne(a, data, tmp)


if __name__ == "__main__":
    main()
