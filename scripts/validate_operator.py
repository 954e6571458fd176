#!/usr/bin/env python3
"""Step-level check of `step_time.kind: operator` against measured whole steps and static
batches, with nothing fitted to them. Three step models side by side: the GPU's own AIConfigurator
tables, the shape-aware roofline fitted without that GPU's tables (operators.source: roofline,
fit: fit-without-<gpu>: leave one GPU out), and the old `kind: roofline` with its defaults.

  1. Whole steps, through `servesim calibrate --check-step-time`:
     - Llama-3.1-8B TP1 on RTX PRO 6000 (vLLM 0.19 tables) against the steps composed from
       LLMServingSim's vLLM layer profiles of that GPU (decodes at KV up to 8,192, prefill
       chunks, mixed steps: the profile's own grid);
     - Llama-2-70B TP4 on H100 (vLLM and TRT-LLM tables) against Splitwise's measured prefill
       and decode steps (perf_model.csv).
  2. Argonne LLM-Inference-Bench's static batches (All_results.csv: A100 and H100, vLLM and
     TensorRT-LLM, the catalogue's models): the whole batch's latency, one prefill of the batch
     then its decode steps, as servesim's static scheduler runs it.

usage: scripts/validate_operator.py [--servesim build/servesim] [--data ../shared/data]
                                    [--skip-argonne] [--allreduce custom|nccl]
                                    [--host-time off|serial|overlap] [--diagnose]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import shared_data  # scripts/shared_data.py: the --data folder, or a clear message

CASES = [
    ("Llama-3.1-8B TP1, RTX PRO 6000, vLLM 0.19 tables vs LLMServingSim layer profiles",
     "llama-3.1-8b", "rtx-pro-6000", 1, "rtx_pro_6000_server", "vllm",
     ["timings/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/tp1",
      "--layers", "32", "--max-kv-per-seq", "8192"]),
    ("Llama-2-70B TP4, H100, vLLM 0.19 tables vs Splitwise", "llama-2-70b", "h100-sxm", 4,
     "h100_sxm", "vllm",
     ["timings/splitwise/perf_model.csv", "--source-model", "llama2-70b",
      "--source-hardware", "h100-80gb", "--source-tp", "4"]),
    ("Llama-2-70B TP4, H100, TRT-LLM 1.3 tables vs Splitwise", "llama-2-70b", "h100-sxm", 4,
     "h100_sxm", "trtllm",
     ["timings/splitwise/perf_model.csv", "--source-model", "llama2-70b",
      "--source-hardware", "h100-80gb", "--source-tp", "4"]),
]


SCALED_HW = {"a100-40gb"}  # parts whose tables were measured on a sibling part
STEP_MODELS = ["own table", "shape roofline LOGO", "old roofline"]


# --host-time: the measuring engine's host time a step (issue 21), as step_time.cpu_overhead:
# serial (vLLM V0, the engine these measurements ran: every part on the critical path) or
# overlap (only sampling exposed; the rest hides under steps this long). Constants from
# scripts/host_time_constants.py (Vidur's A100 cpu_overheads.csv), never from these checks.
HOST = {"mode": "off", "overhead": None, "allreduce": "custom"}


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
        ar = f", allreduce: {HOST['allreduce']}" if tp > 1 and HOST["allreduce"] != "custom" else ""
        # The a100_sxm tables are the 80 GB part (2.039 TB/s); Argonne's A100s are the 40 GB
        # part (1.555 TB/s): move each operator to the catalogue's datasheet (issue 16).
        if hw in SCALED_HW and not HOST.get("no_scale"):
            ar += ", scale_to_hardware: true"
        return (f"kind: operator\n{head}operators: {{source: tables, path: "
                f"{data}/timings/aiconfigurator, gpu: {gpu}, engine: {engine}{ar}}}\n")
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
            r = subprocess.run(args + ["--check-step-time", cfg], capture_output=True, text=True)
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
    s = static_batch_summary(a, tmp, step_time, batch, length)
    return None if s is None else s["last_release_s"] - s["first_arrival_s"]


def static_batch_summary(a, tmp, step_time, batch, length):
    """summary.json of one static batch of `batch` prompts of `length` in and out under the
    `step_time` section (YAML text); None when servesim refuses it. energy_check.py uses it too."""
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
        return json.load(f)


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


# --diagnose: operator by operator, the terms behind the step errors above, each against another
# measurement of the same operator (never against the steps being scored).
def _log_interp(d, x):
    """d {x: y} at x, log-log between measured points, clamped at the ends."""
    import math
    ks = sorted(d)
    if x in d:
        return d[x]
    lo = max([k for k in ks if k <= x], default=ks[0])
    hi = min([k for k in ks if k >= x], default=ks[-1])
    if lo == hi:
        return d[lo]
    f = (math.log(x) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return math.exp(math.log(d[lo]) * (1 - f) + math.log(d[hi]) * f)


def _gemm_table(path):
    """AIConfigurator gemm.csv (bf16) as a function (m, n, k) -> ms, as models/operator_tables.cpp
    reads it: log-log in m on each measured (n, k) line, then log-log across n and k."""
    import math
    g = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["latency_ms_bfloat16"]:
                g.setdefault((int(r["n"]), int(r["k"])), {})[int(r["m"])] = float(r["latency_ms_bfloat16"])
    ns, ks = sorted({a for a, _ in g}), sorted({b for _, b in g})

    def bracket(v, xs):
        return (max([x for x in xs if x <= v], default=xs[0]), min([x for x in xs if x >= v], default=xs[-1]))

    def blend(v, lo, hi, ylo, yhi):
        return ylo if lo == hi else ylo + (yhi - ylo) * (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))

    def at(m, n, k):
        nl, nh = bracket(n, ns)
        kl, kh = bracket(k, ks)
        line = lambda a, b: math.log(_log_interp(g[(a, b)], m))
        row = lambda a: blend(k, kl, kh, line(a, kl), line(a, kh))
        return math.exp(blend(n, nl, nh, row(nl), row(nh)))
    return at


def diagnose(data):
    import math
    aic = os.path.join(data, "timings/aiconfigurator")
    # 1. RTX PRO 6000, Llama-3.1-8B TP1: the layer profiles (LLMServingSim, vLLM) against the
    # vLLM 0.19 tables, per layer, in microseconds. Elementwise: the operator model's passes at
    # AIConfigurator's datasheet constants (0.8 x 1.792 TB/s + 3 us a pass).
    prof = os.path.join(data, "timings/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/tp1")
    dense = {}
    with open(os.path.join(prof, "dense.csv")) as f:
        for r in csv.DictReader(f):
            dense.setdefault(r["layer"], {})[int(r["tokens"])] = float(r["time_us"])
    gemm = _gemm_table(os.path.join(aic, "rtx_pro_6000_server/vllm-0.19.0/gemm.csv"))
    shapes = {"qkv_proj": (6144, 4096), "o_proj": (4096, 4096), "gate_up_proj": (28672, 4096),
              "down_proj": (4096, 14336)}
    ew = lambda b: 3 + b / (1.792e12 * 0.8) * 1e6
    ctx = {}
    with open(os.path.join(aic, "rtx_pro_6000_server/vllm-0.19.0/context_attention.csv")) as f:
        for r in csv.DictReader(f):
            if (r["head_dim"], r["num_heads"], r["num_key_value_heads"], r["batch_size"]) == ("128", "32", "8", "1"):
                ctx[int(r["isl"])] = float(r["latency_ms_bfloat16_kv_bfloat16"]) * 1e3
    att = {}
    with open(os.path.join(prof, "attention.csv")) as f:
        for r in csv.DictReader(f):
            if r["n_decode"] == "0":
                att[(int(r["prefill_chunk"]), int(r["kv_prefill"]))] = float(r["time_us"])
    print("RTX PRO 6000, Llama-3.1-8B TP1, one layer at T tokens (us): layer profile / vLLM 0.19 table\n")
    print("| T | 4 GEMMs | elementwise (norms, SiLU, rotary; model adds the KV write) | prefill attention (chunk T, no prefix) | sum: table vs profile |")
    print("|---|---|---|---|---|")
    for t in (16, 64, 256, 512, 1024, 2048):
        gp = sum(_log_interp(dense[s], t) for s in shapes)
        gt = sum(gemm(t, n, k) * 1e3 for n, k in shapes.values())
        ep = 2 * _log_interp(dense["layernorm"], t) + _log_interp(dense["act_fn"], t) + _log_interp(dense["rotary_emb"], t)
        et = (2 * ew(4 * t * 4096 * 2) + ew(3 * t * 14336 * 2) + ew(2 * t * 5120 * 2) + ew(2 * t * 1024 * 4))
        ap, at = att.get((t, 0)), _log_interp(ctx, t)
        cell = f"{ap:.0f} / {at:.0f} ({at / ap - 1:+.0%})" if ap else ""
        tot_p, tot_t = gp + ep + (ap or 0), gt + et + (at if ap else 0)
        print(f"| {t} | {gp:.0f} / {gt:.0f} ({gt / gp - 1:+.0%}) | {ep:.0f} / {et:.0f} ({et / ep - 1:+.0%}) | {cell} | "
              f"{tot_t / tot_p - 1:+.1%} (GEMMs {(gt - gp) / tot_p * 100:+.1f} pts, elementwise {(et - ep) / tot_p * 100:+.1f} pts) |")
    print("\nPrefill attention of a chunk after an earlier chunk's context (us): layer profile / the model's "
          "context attention at the equivalent length sqrt(chunk^2 + 2 chunk prefix), batch 1\n")
    print("| chunk | prefix 0 | prefix 1024 | prefix 4096 |")
    print("|---|---|---|---|")
    for c in (16, 64, 256, 512, 1024, 2048):
        cells = []
        for p in (0, 1024, 4096):
            meas = att.get((c, p))
            pred = _log_interp(ctx, math.sqrt(c * c + 2 * c * p))
            cells.append(f"{meas:.0f} / {pred:.0f} ({pred / meas - 1:+.0%})" if meas else "")
        print(f"| {c} | " + " | ".join(cells) + " |")
    # 2. H100 TP4, Llama-2-70B: Vidur's 2024 profiles of the same operators (vLLM-era GEMMs and
    # NCCL all-reduce on a DGX H100) against the tables the model uses, as shares of Splitwise's
    # measured steps.
    vid = os.path.join(data, "timings/vidur")
    ar = {}
    with open(os.path.join(vid, "network/h100_dgx/all_reduce.csv")) as f:
        for r in csv.DictReader(f):
            if r["num_workers"] == "4":
                ar[int(r["size"])] = float(r["time_stats.all_reduce.median"])  # size in bytes
    graph, eager, nccl = {}, {}, {}
    with open(os.path.join(aic, "h100_sxm/vllm-0.19.0/custom_allreduce.csv")) as f:
        for r in csv.DictReader(f):
            if r["num_gpus"] == "4":
                (graph if r["kernel_source"] == "vLLM_custom_graph" else eager)[int(r["message_size"])] = float(r["latency_ms"])
    with open(os.path.join(aic, "h100_sxm/nccl-2.29.2/nccl.csv")) as f:
        for r in csv.DictReader(f):
            if r["op_name"] == "all_reduce" and r["nccl_dtype"] == "half" and r["num_gpus"] == "4":
                nccl[int(r["message_size"])] = float(r["latency_ms"])  # elements
    with open(os.path.join(data, "timings/splitwise/perf_model.csv")) as f:
        rows = [r for r in csv.DictReader(f) if (r["model"], r["hardware"], r["tensor_parallel"]) == ("llama2-70b", "h100-80gb", "4")]
    h, layers = 8192, 80
    print("\nLlama-2-70B TP4 on H100, Splitwise's 105 decode steps: 160 all-reduces of batch x 8,192 bf16 "
          "a step, each table's time as a share of the measured step (mean)\n")
    print("| all-reduce | ms a step (mean) | share of the measured step |")
    print("|---|---|---|")
    for name, tab, scale in (("vLLM 0.19 custom, CUDA graph (what the model uses)", graph, 1),
                             ("vLLM 0.19 custom, eager", eager, 1), ("NCCL 2.29 (AIConfigurator)", nccl, 1),
                             ("NCCL, Vidur's DGX H100 profile (2024)", ar, 2)):
        ms = [2 * layers * _log_interp(tab, scale * int(r["batch_size"]) * h) for r in rows]
        share = [m / float(r["token_time"]) * 100 for m, r in zip(ms, rows)]
        print(f"| {name} | {sum(ms) / len(ms):.2f} | {sum(share) / len(share):.1f}% |")
    vm = {}
    with open(os.path.join(vid, "compute/h100/meta-llama/Llama-2-70b-hf/mlp.csv")) as f:
        for r in csv.DictReader(f):
            if r["num_tensor_parallel_workers"] == "4":
                vm[int(r["num_tokens"])] = r
    g70 = _gemm_table(os.path.join(aic, "h100_sxm/vllm-0.19.0/gemm.csv"))
    sh = {"attn_pre_proj": (2560, 8192), "attn_post_proj": (8192, 2048), "mlp_up_proj": (14336, 8192),
          "mlp_down_proj": (8192, 7168)}
    print("\nThe four GEMMs of one Llama-2-70B TP4 layer on H100 (ms): Vidur's profile / the vLLM 0.19 table\n")
    print("| tokens | Vidur | table | Vidur / table - 1 |")
    print("|---|---|---|---|")
    for t in (1, 64, 256, 512, 1024, 2048, 4096):
        if t not in vm:
            continue
        v = sum(float(vm[t][f"time_stats.{s}.median"]) for s in sh)
        a = sum(g70(t, n, k) for n, k in sh.values())
        print(f"| {t} | {v:.3f} | {a:.3f} | {v / a - 1:+.0%} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--skip-argonne", action="store_true")
    ap.add_argument("--host-time", choices=["off", "serial", "overlap"], default="off",
                    help="add the measuring engine's host time a step (issue 21) to the measured "
                         "whole steps' and vLLM batches' predictions: serial (vLLM V0) or overlap")
    ap.add_argument("--allreduce", choices=["custom", "nccl"], default="custom",
                    help="the own tables' all-reduce at TP > 1: the engine's custom kernel "
                         "(default) or the GPU's NCCL table (what 2023-24 stacks ran)")
    ap.add_argument("--diagnose", action="store_true",
                    help="print the operator-by-operator comparisons behind the errors and stop")
    ap.add_argument("--no-scale", action="store_true",
                    help="use the A100 80 GB tables for Argonne's A100 40 GB as they are")
    a = ap.parse_args()
    shared_data.require(a.data, __file__)
    HOST["allreduce"] = a.allreduce
    HOST["no_scale"] = a.no_scale
    data = os.path.abspath(a.data)
    if a.diagnose:
        diagnose(data)
        return
    if a.host_time != "off":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        HOST["overhead"] = host_overhead(data, a.host_time)
        print(f"host time ({a.host_time}): cpu_overhead per_step_ms {HOST['overhead'][0]:.4f}, "
              f"per_sequence_ms {HOST['overhead'][1]:.5f} on Splitwise's steps and vLLM's "
              "Argonne batches\n")
    with tempfile.TemporaryDirectory() as tmp:
        print("## Whole steps (servesim calibrate --check-step-time)\n")
        step_checks(a, data, tmp)
        if not a.skip_argonne:
            print("## Argonne LLM-Inference-Bench static batches (whole-batch latency)\n")
            argonne(a, data, tmp)


if __name__ == "__main__":
    main()
