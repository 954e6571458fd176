#!/usr/bin/env python3
"""Predict the open MLPerf development set (shared/data/published/published_dev.csv) end to end,
with each system's published engine settings, nothing fitted to the figures; print a markdown
table: published, operator model (the GPU's own AIConfigurator tables, or the shape-aware roofline
for a chip without), the shape-aware roofline fitted without that GPU's tables (leave one GPU
out), the old roofline (kind: roofline, efficiencies 0.8 / 0.6), and the errors.

Every run is built from its row's own columns (scripts/mlperf_rows.py: hardware, model, engine,
parallelism, precision and engine settings matched to the catalogue), so that --rows FILE predicts
any csv in the development set's format, such as published figures kept apart from this project;
a row that cannot be built is listed with the reason ("not built: ...").

Per source_id one engine replica is simulated (replicas share nothing), at target_qps / replicas
(Server, Interactive: Poisson arrivals; --requests a replica) or with every request at t = 0
(Offline: rate 1e9; throughput = output tokens / last completion, times the replicas). An Offline
replica gets its share of the published query, as LoadGen sends it: the load_condition's sample
count / replicas (for example 417,792 / 8 = 52,224), so that the drain at the end weighs what it
weighed in the measured run; --offline-requests N overrides it.

Lengths (the row's workload column and the README's dataset notes; the results do not hold
per-sample lengths; mlperf_rows.lengths):
  - llama2-70b, OpenOrca: input and output lognormal with sigma 0.8, capped at 1,024, medians
    solved so that the capped means are 294 (input) and the run's implied output mean.
  - llama3.1-8b, CNN/DailyMail: output 128 fixed (the cap; implied means 128-129). Input is not
    given: assumed lognormal, sigma 0.4, capped at 2,540, with a capped mean of 800 tokens
    (Nallapati et al. 2016 report 781 tokens per CNN/DM article; the prompt template adds a
    few dozen). --cnn-input-means prints the sensitivity to that assumption.

All-reduce: the operator model takes it from the GPU's tables, except on the L40S, whose
tables (custom and NCCL alike) were measured on a host without PCIe peer-to-peer (about 5 GB/s
bus bandwidth at TP4: at the published throughput the all-reduce traffic alone would take longer
than the run did); there `operators.allreduce: link` times it from the catalogue's PCIe Gen4 x16
link at NCCL's measured bus-bandwidth share of a PCIe link (models/link_allreduce.h).

KV capacity: TensorRT-LLM gives the KV pool kvcache_free_gpu_mem_frac of the memory left after
the weights (computed here: memory_gib x 2^30 minus the weights, the embedding and LM head in
bf16, the rest in the weight dtype, activations not subtracted; a token's KV is the cached
latent, whole on every GPU, for multi-head latent attention); vLLM's is
gpu_memory_utilization of the whole memory minus the weights (servesim's kv.memory rule).

Engine presets (--engine-presets, issue 21): the vLLM rows run under `scheduler.kind: vllm` at
their published version (0.6.5: the V0 scheduler, prefill-only steps without chunked prefill)
with their num_scheduler_steps and enforce_eager (cuda_graphs: false); the TensorRT-LLM rows pin
version 0.21.0 (the harness's C++ executor) with their published CUDA-graph setting. Without
it the vLLM rows whose configs enable the AMD fork's MLPerf decode scheduler (which no preset
models) run under `kind: continuous` (no chunked prefill) and the TensorRT-LLM rows at servesim's
default trtllm version, as before; a vLLM row whose config does not enable that scheduler (the
MI300X Interactive run) always runs under the preset, which then models its engine whole
(uses_presets).

Host time (--host-time off|on|both, issue 21): the operator model of every row again, with
scheduler.host_time false or true through servesim's --set, side by side (both) with the
errors and a mean and median |error| line for each. A row whose scheduler is not an engine
preset (the vLLM rows without --engine-presets: kind continuous) has no host_time and is n/a,
as is one whose engine refuses the default host time (TensorRT-LLM before 1.0: no public host
profile of the C++ executor). --v0-cpu-overhead is the earlier approximation (the vLLM rows'
V0 host time as step_time.cpu_overhead, the TensorRT-LLM rows' CUDA-graph setting).

usage: scripts/predict_mlperf.py [--servesim build/servesim] [--data ../shared/data] [--rows CSV]
                                 [--requests 8000] [--offline-requests N] [--cnn-input-means 500,800,1100] [--keep DIR]
                                 [--engine-presets] [--host-time off|on|both]
                                 [--v0-cpu-overhead]
"""
import argparse
import csv
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

import catalogue  # scripts/catalogue.py: the catalogue as the scripts read it
import mlperf_rows as mr  # scripts/mlperf_rows.py: a published row read into settings
import shared_data  # scripts/shared_data.py: the --data folder, or a clear message

NOT_MODELLED_VLLM = ("not modelled: multi-step decoding (num_scheduler_steps), the MLPerf decode "
                     "scheduler, V0's prefill-only steps, enforce_eager")


HOST = {"on": False, "overhead": None}  # --v0-cpu-overhead (issue 21)
OFFLINE = {"requests": None}  # --offline-requests: None = the published query's share


def offline_requests(s, row):
    """An Offline replica's share of LoadGen's one query (load_condition's sample count)."""
    if OFFLINE["requests"]:
        return OFFLINE["requests"]
    m = re.search(r"one query of (\d+) samples", row["load_condition"])
    if not m:
        raise SystemExit(f"{row['source_id']}: load_condition names no Offline sample count")
    return -(-int(m.group(1)) // s["replicas"])
PRESETS = {"on": False}  # --engine-presets (issue 21)
V0_AS_PUBLISHED = "MLPerf decode scheduler not enabled"


def uses_presets(s, row):
    """--engine-presets, or a vLLM row whose published engine the V0 preset models whole.

    The AMD fork is vLLM 0.6.5 (V0) without chunked prefill: a step is all prefill or all decode,
    with num_scheduler_steps and enforce_eager (the README's per-source notes). `kind: vllm` at
    that version models all three; `kind: continuous` puts whole prompts into decode steps, which
    that engine never does. The one thing the preset lacks is the fork's MLPerf decode scheduler
    (VLLM_LLAMA2_MLPERF_SCHED), so a row whose config enables it (MI300X and MI325X Server and
    Offline) stays on `kind: continuous` unless --engine-presets; a row whose engine_settings say
    it is not enabled (the MI300X Interactive run) runs under the preset, its published engine.
    A V1 row (vLLM 0.8 on) always runs under the preset at its version: V1's scheduler whole."""
    return PRESETS["on"] or (s["engine"] == "vllm" and (
        s["v1"] or V0_AS_PUBLISHED in row["engine_settings"]))
HOST_KINDS = ("vllm", "sglang", "trtllm")  # the scheduler kinds that read host_time


def scenario(s, row, model_kind, requests, lengths):
    lc = row["load_condition"]
    es = row["engine_settings"]
    offline = row["scenario"] == "Offline"
    rate = 1e9 if offline else mr.number(lc, "target_qps=") / s["replicas"]
    if offline:
        requests = offline_requests(s, row)
    prompt, output = lengths
    y = ["workload:", "  synthetic:", f"    requests: {requests}",
         f"    arrival: {{kind: poisson, rate_per_s: {rate}}}",
         f"    prompt_tokens: {prompt}", f"    output_tokens: {output}", "step_time:"]
    hw = s["hw"]
    pipeline = [f"  pipeline_parallel: {s['pp']}"] if s["pp"] > 1 else []
    # Attention data parallelism: TP ranks of one GPU each, the experts over all of them
    # (docs/expert-parallelism.md); the engine's batch and token limits are each rank's.
    ranks = s["tp"] if s.get("attn_dp") else 1
    parallel = (["  tensor_parallel: 1", f"  data_parallel: {ranks}"] if ranks > 1 else
                [f"  tensor_parallel: {s['tp']}"])
    if model_kind in ("operator", "logo"):
        y += ["  kind: operator", f"  model: {s['model']}", f"  hardware: {hw}"] + parallel + \
             pipeline + [f"  weight_dtype: {s['weight']}",
              f"  attention_dtype: {s['attn']}", f"  kv_dtype: {s['kv']}"]
        if model_kind == "logo":
            y.append(f"  operators: {{source: roofline, fit: fit-without-{s['tables']}}}")
        elif s["tables"]:
            # The L40S tables' all-reduce (custom and NCCL alike, about 5 GB/s bus bandwidth at
            # TP4) was measured on a host without PCIe peer-to-peer; the submission's PCIe Gen4
            # x16 host is timed from the link instead (allreduce: link, docs/config.md).
            link = ", allreduce: link" if s.get("allreduce") == "link" else ""
            y.append(f"  operators: {{source: tables, path: {catalogue.ROOT}/data/timings/aiconfigurator, "
                     f"gpu: {s['tables']}, engine: {s['engine']}{link}}}")
        else:
            y.append("  operators: {source: roofline, fit: fit-all}")
    else:
        # The old roofline has no fp4: nvfp4 weights read as int4, at the fp8 peak.
        w = "int4" if s["weight"] == "nvfp4" else s["weight"]
        compute = "fp8" if s["weight"] in ("nvfp4", "fp8") else s["weight"]
        y += ["  kind: roofline", f"  model: {s['model']}", f"  hardware: {hw}",
              f"  tensor_parallel: {s['tp']}"] + pipeline + [f"  weight_dtype: {w}",
              f"  kv_dtype: {s['kv']}",
              f"  compute_dtype: {compute}"]
    host = ""
    presets = uses_presets(s, row)
    if PRESETS["on"] and s["engine"] == "trtllm":  # the harness's C++ executor, as published
        host = (", cuda_graphs: {enable_padding: true}" if "CUDA graphs on" in es
                else ", cuda_graphs: false") + ', version: "0.21.0"'
    elif presets:
        pass  # vLLM V0 under kind: vllm (below)
    elif HOST["on"] and s["engine"] == "trtllm":
        # The harness's C++ executor: no public host profile, so only its CUDA-graph setting.
        host = (", cuda_graphs: {enable_padding: true}" if "CUDA graphs on" in es
                else ", cuda_graphs: false") + ', version: "0.21.0"'
    elif HOST["on"]:  # vLLM V0 (0.6.5): every host part on the critical path, once a step
        per_step, per_seq = HOST["overhead"]
        y.append(f"  cpu_overhead: {{per_step_ms: {per_step:.6g}, per_sequence_ms: {per_seq:.6g}}}")
    if s["engine"] == "trtllm":
        batch = s["batch"] * ranks
        tokens = s["tokens"] * ranks
        y.append(f"scheduler: {{kind: trtllm, max_batch_size: {batch}, max_num_tokens: {tokens},"
                 f" enable_chunked_context: {str(s['chunked']).lower()}, "
                 f"capacity_scheduler_policy: MAX_UTILIZATION{host}}}")
        y.append(f"kv: {{policy: paged, block_size: {s['block']}, "
                 f"capacity_tokens: {mr.trt_capacity(s)}}}")
    else:
        seqs, tokens, util = s["seqs"], s["batched"], s["util"]
        if presets and s["v1"]:  # V1: its scheduler with chunked prefill, the version's defaults
            eager = ", cuda_graphs: false" if "enforce_eager" in es else ""
            y.append(f"scheduler: {{kind: vllm, version: \"{s['version']}\", "
                     f"max_num_seqs: {seqs}, max_num_batched_tokens: {tokens}{eager}}}")
        elif presets:  # vLLM 0.6.5 (V0): its scheduler, multi-step and enforce_eager
            steps = int(mr.number(es, "num_scheduler_steps") or 1)
            eager = ", cuda_graphs: false" if "enforce_eager" in es else ""
            y.append(f"scheduler: {{kind: vllm, version: \"{s['version']}\", "
                     f"max_num_seqs: {seqs}, max_num_batched_tokens: {tokens}, "
                     f"enable_chunked_prefill: false, num_scheduler_steps: {steps}{eager}}}")
        else:
            y.append(f"scheduler: {{kind: continuous, max_num_seqs: {seqs}, "
                     f"max_num_batched_tokens: {tokens}, chunked_prefill: false}}")
        # V1 caches prefixes by default (nothing in these synthetic prompts is shared).
        cache = ", prefix_caching: true" if presets and s["v1"] else ""
        y.append(f"kv: {{policy: paged, block_size: {s['block']}{cache}, memory: {{model: "
                 f"{s['model']}, hardware: {hw}, tensor_parallel: {s['tp']}, "
                 f"{f'pipeline_parallel: {pp}, ' if (pp := s['pp']) > 1 else ''}weight_dtype: "
                 f"{s['weight']}, kv_dtype: {s['kv']}, utilization: {util}}}}}")
    y.append("seed: 1")
    return "\n".join(y) + "\n"


def scheduler_kind(text):
    """The kind of a generated scenario's one-line scheduler section."""
    m = re.search(r"^scheduler: \{kind: (\w+)", text, re.M)
    return m.group(1) if m else None


def reason(error):
    """servesim's error line without its prefix and file position, shortened."""
    text = re.sub(r"^servesim: error: ", "", error.strip())
    text = re.sub(r" at \S+?(:\d+:\d+| \(from --set [^)]*\)): ", ": ", text)
    return text if len(text) <= 120 else text[:117] + "..."


def run(a, text, work, name, sets=()):
    cfg = os.path.join(work, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(text)
    out = os.path.join(work, name)
    r = subprocess.run([a.servesim, "run", cfg, "--out", out, "--quiet", "--no-requests-csv",
                        "--no-progress"] + [x for kv in sets for x in ("--set", kv)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1]
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f), None


def figure(summary, metric, replicas):
    if metric == "tokens_per_s":
        return summary["output_tokens"] / summary["last_release_s"] * replicas
    dist = summary["ttft_s" if metric.startswith("ttft") else "tpot_s"]
    return dist["mean" if metric.endswith("mean") else "p99"] * 1000


def prepare(row, input_mean=None):
    """(settings, (prompt, output) lengths, None) for a published row, or (None, None, why)."""
    s, why = mr.system(row)
    if why:
        return None, None, why
    if row["scenario"] == "Offline" and not OFFLINE["requests"] and \
            not re.search(r"one query of (\d+) samples", row["load_condition"]):
        return None, None, "the load condition names no Offline sample count (one query of N samples)"
    try:
        return s, mr.lengths(row, input_mean), None
    except ValueError as e:
        return None, None, str(e)


ROW_COLUMNS = ("source_id", "engine", "engine_settings", "model", "precision", "hardware",
               "parallelism", "workload", "scenario", "load_condition", "metric", "value")


METRICS = ("tokens_per_s", "ttft_mean", "ttft_p99", "tpot_mean", "tpot_p99")


def bad_input(message):
    """Exits with status 2 (bad input, as servesim does), the message on stderr."""
    print(f"{os.path.basename(sys.argv[0])}: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_rows(path):
    """The published rows of a csv in the development set's format, or exits (2) naming the file,
    the line or the column, and what is allowed."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in ROW_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                bad_input(f"{path}: no column {', '.join(missing)} (the development set's "
                          f"columns: {', '.join(ROW_COLUMNS)})")
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        bad_input(f"{path}: {getattr(e, 'strerror', None) or e}")
    for n, row in enumerate(rows, start=2):
        try:
            if not math.isfinite(float(row["value"])):
                raise ValueError
        except (TypeError, ValueError):
            bad_input(f"{path}:{n}: value {row['value']!r} is not a finite number")
        if row["scenario"] not in ("Server", "Interactive", "Offline"):
            bad_input(f"{path}:{n}: scenario {row['scenario']!r} (Server, Interactive or Offline)")
        if row["metric"] not in METRICS:
            bad_input(f"{path}:{n}: metric {row['metric']!r} ({', '.join(METRICS)})")
    return rows


def err(pred, pub):
    return (pred - pub) / pub * 100


def host_time_table(a, rows, work):
    """--host-time: the operator model of every row with host_time off and on, side by side."""
    modes = ["off", "on"] if a.host_time == "both" else [a.host_time]
    cache = {}  # (source_id, mode) -> (summary, why)
    lines = []  # (source_id, metric, published, {mode: (value, star) or None}, note)
    for row in rows:
        sid, metric, pub = row["source_id"], row["metric"], float(row["value"])
        s, lengths, not_built = prepare(row)
        vals, notes = {}, []
        for mode in modes:
            if (sid, mode) not in cache:
                if not_built:
                    cache[(sid, mode)] = (None, f"not built: {not_built}")
                else:
                    text = scenario(s, row, "operator", a.requests, lengths)
                    kind = scheduler_kind(text)
                    if kind not in HOST_KINDS:
                        cache[(sid, mode)] = (None, f"n/a: scheduler {kind} has no host_time")
                    else:
                        sets = [f"scheduler.host_time={'true' if mode == 'on' else 'false'}"]
                        summ, why = run(a, text, work, f"{sid}-operator-host-{mode}", sets)
                        cache[(sid, mode)] = (summ, None if summ else f"n/a ({mode}): {reason(why)}")
            summ, why = cache[(sid, mode)]
            if summ is None:
                vals[mode] = None
                if why not in notes:
                    notes.append(why)
                continue
            offered = mr.number(row["load_condition"], "target_qps=")
            star = "*" if offered and summ["requests_per_s"] * s["replicas"] < 0.95 * offered else ""
            vals[mode] = (figure(summ, metric, s["replicas"]), star)
        lines.append((sid, metric, pub, vals, "; ".join(notes)))
    print("| source_id | metric | published | " + " | ".join(
        f"operator, host time {m} | err" for m in modes) + " | note |")
    print("|---|---|---|" + "---|---|" * len(modes) + "---|")
    for sid, metric, pub, vals, note in lines:
        cells = []
        for m in modes:
            v = vals[m]
            cells += ["n/a", ""] if v is None else [f"{v[0]:.1f}{v[1]}", f"{err(v[0], pub):+.0f}%"]
        print(f"| {sid} | {metric} | {pub:g} | " + " | ".join(cells) + f" | {note} |")
    print()
    print("\\* the simulated replica completes under 95% of the offered rate (overloaded).")
    print()
    for m in modes:
        e = [abs(err(v[m][0], pub)) for _, _, pub, v, _ in lines if v[m] is not None]
        if e:
            print(f"- host time {m}: mean |error| {statistics.mean(e):.1f}%, median "
                  f"{statistics.median(e):.1f}% over {len(e)} figures")
        else:
            print(f"- host time {m}: no figure (n/a throughout)")
    both = [(pub, v) for _, _, pub, v, _ in lines if all(v[m] is not None for m in modes)]
    if len(modes) > 1 and both:
        print(f"- on the {len(both)} figures both predict: " + ", ".join(
            f"host time {m} mean |error| "
            f"{statistics.mean(abs(err(v[m][0], pub)) for pub, v in both):.1f}%"
            for m in modes))
    print(f"- n/a: {len(lines) - len(both)} of {len(lines)} figures (the note says why)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--requests", type=int, default=8000,
                    help="requests per simulated replica (Server, Interactive)")
    ap.add_argument("--offline-requests", type=int,
                    help="Offline samples per simulated replica (default: the published "
                         "query's sample count / replicas)")
    ap.add_argument("--cnn-input-means", default="500,800,1100",
                    help="CNN/DailyMail mean input lengths for the sensitivity table")
    ap.add_argument("--keep", help="keep the generated configs and results here")
    ap.add_argument("--rows", help="published rows in the development set's format (default: "
                                   "DATA/published/published_dev.csv)")
    ap.add_argument("--v0-cpu-overhead", action="store_true",
                    help="issue 21's first approximation: TRT-LLM rows get their CUDA-graph "
                         "setting (cuda_graphs); vLLM V0 rows the host time of every step "
                         "(step_time.cpu_overhead, scripts/host_time_constants.py)")
    ap.add_argument("--engine-presets", action="store_true",
                    help="vLLM rows under kind: vllm at their version (V0, multi-step, "
                         "enforce_eager); TRT-LLM rows pinned to 0.21.0 with their CUDA graphs")
    ap.add_argument("--host-time", choices=["off", "on", "both"],
                    help="the operator model with scheduler.host_time false (off), true (on) or "
                         "both, side by side (--set); n/a where the scheduler has no host_time")
    a = ap.parse_args()
    # The data collection holds the development set and the V0 host-time measurements; rows
    # given with --rows run on the repository's own catalogue and tables alone.
    if not a.rows or a.v0_cpu_overhead:
        shared_data.require(a.data, __file__)
    data = os.path.abspath(a.data)
    if a.engine_presets and a.v0_cpu_overhead:
        sys.exit("--engine-presets and --v0-cpu-overhead: give one (the presets carry the "
                 "CUDA-graph settings; host time comes with --host-time)")
    PRESETS["on"] = a.engine_presets
    OFFLINE["requests"] = a.offline_requests
    if a.v0_cpu_overhead:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import host_time_constants as htc
        parts, _, _ = htc.constants(data)
        HOST.update(on=True, overhead=(sum(p[0] for p in parts.values()),
                                       sum(p[1] for p in parts.values())))
    rows = read_rows(a.rows or os.path.join(data, "published/published_dev.csv"))
    work = a.keep or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    if a.host_time:
        host_time_table(a, rows, work)
        return
    results = {}  # (source_id, kind, input mean or None) -> summary or error text

    def get(sid, row, kind, input_mean=None):
        key = (sid, kind, input_mean)
        if key not in results:
            s, lengths, not_built = prepare(row, input_mean)
            if not_built:
                results[key] = (None, f"not built: {not_built}")
            elif kind == "logo" and not s["tables"]:
                results[key] = (None, "as operator (no table)")
            elif kind == "logo" and s["weight"] == "nvfp4":
                results[key] = (None, "refused: no fp4 peak")
            elif kind == "roofline" and s.get("attn_dp"):
                results[key] = (None, "refused: no data-parallel attention")
            else:
                text = scenario(s, row, kind, a.requests, lengths)
                summ, why = run(a, text, work, f"{sid}-{kind}-{input_mean or 'row'}")
                results[key] = (summ, why and reason(why))
        return results[key]

    print("| source_id | metric | published | operator | err | shape roofline LOGO | err |"
          " old roofline | err | note |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    errs = {"operator": [], "logo": [], "roofline": []}
    per_row = {"operator": {}, "logo": {}, "roofline": {}}
    for i, row in enumerate(rows):
        sid, metric, pub = row["source_id"], row["metric"], float(row["value"])
        s = mr.system(row)[0]
        cells = []
        for kind in ("operator", "logo", "roofline"):
            summ, why = get(sid, row, kind)
            if summ is None:
                cells += [why, ""]
                continue
            v = figure(summ, metric, s["replicas"])
            e = err(v, pub)
            # A Server replica whose simulated completions fall 5% behind the offered rate is
            # overloaded: its queue (and TTFT) grows with the run's length.
            offered = mr.number(row["load_condition"], "target_qps=")
            star = "*" if offered and summ["requests_per_s"] * s["replicas"] < 0.95 * offered else ""
            errs[kind].append(abs(e))
            per_row[kind][i] = abs(e)
            cells += [f"{v:.1f}{star}", f"{e:+.0f}%"]
        note = ""
        if s:
            note = ("tables " + s["tables"] + "/" + s["engine"]) if s["tables"] else \
                "shape roofline fit-all"
            if s["engine"] == "vllm":
                note += " (d)" if s["v1"] else " (c)" if uses_presets(s, row) else " (a)"
            if s["weight"] == "nvfp4":
                note += " (b)"
        print(f"| {sid} | {metric} | {pub:g} | " + " | ".join(cells) + f" | {note} |")
    print()
    print("\\* the simulated replica is overloaded: it completes under 95% of the offered rate, so "
          "its queue and TTFT grow with the run's length.  \n(a) " + NOT_MODELLED_VLLM + ".  \n"
          "(b) nvfp4 weights from the B200 TRT-LLM tables; the shape roofline has no fp4 peak; "
          "the old roofline runs int4 weights at the fp8 peak.  \n(c) vLLM 0.6.5 as published "
          "(kind: vllm: V0 prefill-only steps, num_scheduler_steps, enforce_eager); the MLPerf "
          "decode scheduler is not enabled in this config."
          + ("  \n(d) vLLM V1 (0.8 on) under kind: vllm at its version: V1's scheduler with "
             "chunked prefill and that version's defaults."
             if any((mr.system(r)[0] or {}).get("v1") for r in rows) else ""))
    print()
    names = {"operator": "operator model", "logo": "shape roofline LOGO",
             "roofline": "old roofline"}
    for kind, e in errs.items():
        if e:
            print(f"- {names[kind]}: median |error| {statistics.median(e):.0f}% over {len(e)} "
                  "figures")
        else:
            print(f"- {names[kind]}: no figure")
    # The same, on the figures every model predicts (a run that failed or was refused has none).
    common = [i for i in range(len(rows)) if all(i in v for v in per_row.values())]
    chips = sorted({mr.system(rows[i])[0]["hw"] for i in common})
    if common:
        print(f"- on the {len(common)} figures all three predict ({', '.join(chips)}): "
              + ", ".join(f"{names[k]} {statistics.median(v[i] for i in common):.0f}%"
                          for k, v in per_row.items()))
    refused = {}  # source_id -> why, once a run
    for r in rows:
        why = prepare(r)[2]
        if why:
            refused[r["source_id"]] = why
    for sid, why in refused.items():
        print(f"- not built: {sid}: {why}")
    print()
    # Sensitivity to the CNN/DailyMail input-length assumption (operator model): the rows whose
    # workload gives no mean input length.
    means = [int(x) for x in a.cnn_input_means.split(",")]
    print("| source_id | metric | published | " + " | ".join(
        f"operator, input mean {m}" for m in means) + " |")
    print("|---|---|---|" + "---|" * len(means))
    for row in rows:
        sid = row["source_id"]
        s = mr.system(row)[0]
        if not s or not mr.input_mean_assumed(row):
            continue
        pub = float(row["value"])
        cells = []
        for m in means:
            summ, why = get(sid, row, "operator", None if m == mr.CNN_INPUT_MEAN else m)
            if summ is None:
                cells.append(why)
                continue
            v = figure(summ, row["metric"], s["replicas"])
            cells.append(f"{v:.1f} ({err(v, pub):+.0f}%)")
        print(f"| {sid} | {row['metric']} | {pub:g} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
