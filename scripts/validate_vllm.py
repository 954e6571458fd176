#!/usr/bin/env python3
"""Replay a measured vLLM 0.19 run through servesim and compare latencies request by request.

The step model is built only from the same GPU's per-layer profiles (LLMServingSim's profiler
output), the scheduler is servesim's vllm policy (vLLM 0.19's V1 scheduler) with the run's
max_num_seqs and max_num_batched_tokens and the rest of its scheduler_config where meta.json
records it (--scheduler continuous: the continuous policy with the same limits and chunked
prefill, as before the vllm policy existed) and async_scheduling as vLLM 0.19 defaults (on), KV
is paged, with the
engine's own num_gpu_blocks where meta.json records them (otherwise sized from the GPU's
memory), and prefix caching is on as in vLLM 0.19 (--no-prefix-caching turns it off). A
data-parallel expert-parallel run (Qwen3-30B-A3B: two engines whose experts are split between
their GPUs) is replayed as one replica with the ranks' summed limits and KV, a request's chunk
capped at one rank's budget (long_prefill_token_threshold); the layer_profile model splits each
step over the ranks. Measured metrics follow the data set's definitions:
TTFT = first_token_ts - queued_ts, TPOT = (last_token_ts - first_token_ts) / (output_toks - 1),
E2E = last_token_ts - queued_ts.

usage: scripts/validate_vllm.py [--servesim build/servesim] [--data ../shared/data]
                                [--gpu RTXPRO6000] [--model Llama-3.1-8B]
                                [--no-prefix-caching] [--step-model profile|fitted]
                                [--scheduler vllm|continuous] [--set KEY=VALUE ...]
                                [--host-time [off|on|both]] [--api ENGINE]
--host-time sets scheduler.host_time (issue 21) through servesim's --set; both replays the run
twice and prints the two side by side, with each column's mean |error| over the 12 figures.
--api ENGINE sets api.engine (issue 31: the API server's time before the engine, on its CPU
workers); the measured TTFT and E2E start at queued_ts, the engine's side, so servesim's are its
engine-side figures (requests.csv's server_ttft_s; E2E less the same time outside the engine),
which without the api section are its only ones.
scripts/parity_vllm.py reuses replay() for the per-request and time-series comparison.
"""
import argparse
import copy
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import catalogue  # scripts/catalogue.py: the catalogue as the scripts read it
import shared_data  # scripts/shared_data.py: the --data folder, or a clear message

RUNS_DIR = "serving-runs/vllm-0.19"  # under --data: <GPU>/<model>/{config.json, vllm/...}


def runs(data):
    """Every run folder of the collection, as (gpu, model) folder names, sorted."""
    base = os.path.join(data, RUNS_DIR)
    return sorted((g, m) for g in os.listdir(base) for m in os.listdir(os.path.join(base, g))
                  if os.path.exists(os.path.join(base, g, m, "vllm", "meta.json")))


def run_model(meta_all, run_dir):
    """The catalogue's figures for the run's model (meta.json's checkpoint name matched to
    configs/models, scripts/catalogue.py), with its checkpoint name (hf) and entry (name)."""
    name, why = catalogue.match(meta_all["model"], "models")
    if why:
        sys.exit(f"{run_dir}/vllm/meta.json: model {meta_all['model']!r}: {why}")
    return dict(catalogue.model_spec(name), hf=meta_all["model"], name=name)


def pct(values, p):
    v = sorted(values)
    pos = p / 100 * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def stats(values):
    return {"Mean": statistics.mean(values), "Median": pct(values, 50), "P90": pct(values, 90),
            "P99": pct(values, 99)}


def peer_figures(path):
    """validation/summary.txt: 'TTFT Mean   7097.2   6815.7   -4.0%' lines."""
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        m = re.match(r"(TTFT|TPOT|Latency) (Mean|Median|P90|P99)\s+\S+\s+\S+\s+([-+]?[\d.]+)%", line)
        if m:
            out[(m.group(1), m.group(2))] = float(m.group(3))
    return out


def add_options(ap):
    """The options that say how a run is replayed (shared with scripts/parity_vllm.py)."""
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--keep", help="keep the generated files in this folder")
    ap.add_argument("--step-model", choices=["profile", "fitted"], default="profile",
                    help="profile: interpolate the layer profiles (kind: layer_profile); "
                         "fitted: the form servesim calibrate fits to them")
    ap.add_argument("--overhead-ms", type=float, default=0.0,
                    help="profile: CPU time added to every step (not in the profiles)")
    ap.add_argument("--max-kv-per-seq", type=int, default=4096,
                    help="calibrate on the operating region: steps whose decodes hold at most this much KV each")
    ap.add_argument("--prefix-caching", action=argparse.BooleanOptionalAction, default=True,
                    help="kv.prefix_caching, on by default as in vLLM 0.19 (a preempted "
                         "request's recompute then reuses its own blocks while they are cached)")
    ap.add_argument("--scheduler", choices=["vllm", "continuous"], default="vllm",
                    help="vllm: vLLM 0.19's V1 scheduler (scheduler.kind: vllm); continuous: "
                         "servesim's continuous policy with the same limits and chunked prefill")
    ap.add_argument("--async-scheduling", action=argparse.BooleanOptionalAction, default=None,
                    help="vllm: scheduler.async_scheduling; by default what meta.json's "
                         "scheduler_config records, else vLLM 0.19's default (on)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="passed on to servesim run as --set (repeatable), for experiments")
    ap.add_argument("--host-time", choices=["off", "on", "both"], nargs="?", const="on",
                    default=None,
                    help="vllm: scheduler.host_time (issue 21, docs/schedulers.md) set through "
                         "servesim's --set: on (the bare flag), the engine's host time and CUDA "
                         "graphs with vLLM 0.19's defaults; off, false; both, each run twice, "
                         "the two side by side. Not given: the key is not set (false). "
                         "--scheduler continuous has no host_time: n/a")
    ap.add_argument("--api", default=None, metavar="ENGINE",
                    help="api.engine (issue 31, docs/config.md#api) set through servesim's "
                         "--set, e.g. vllm-0.19: the API server's time before the engine; "
                         "TTFT and E2E are still compared engine-side, as the data measures them")


def write_scenario(a, gpu, model, work):
    """Writes work/scenario.yaml replaying run <gpu>/<model>; returns what describes it."""
    run_dir = f"{a.data}/{RUNS_DIR}/{gpu}/{model}"
    meta_all = json.load(open(f"{run_dir}/vllm/meta.json"))
    spec = run_model(meta_all, run_dir)
    meta = meta_all["engine_kwargs"]
    cfg = json.load(open(f"{run_dir}/config.json"))
    inst = cfg["nodes"][0]["instances"][0]
    tp = int(inst["tp_size"])
    # Data-parallel ranks (one engine each, in lockstep through the experts' all-gather) are
    # replayed as one replica with their summed limits and KV; the step model splits each step
    # over them.
    dp = int(meta.get("data_parallel_size") or 1)
    ep = tp * dp if meta.get("enable_expert_parallel") else tp
    gib = inst["npu_mem"]["mem_size"] * 1e9 / 2**30  # the card's GB, per accelerator
    prof_dir = f"{a.data}/timings/llmservingsim/perf/{gpu}/{spec['hf']}/bf16/tp{tp}"
    os.makedirs(work, exist_ok=True)

    step_file = os.path.join(work, "step_time.yaml")  # calibrate's file in its --out folder
    cal = subprocess.run([a.servesim, "calibrate", prof_dir, "--layers", str(spec["layers"]),
                          "--max-kv-per-seq", str(a.max_kv_per_seq),
                          "--out", work], check=True, capture_output=True, text=True)
    if a.step_model == "profile":
        extra = ""
        if tp > 1 or dp > 1:  # the run's own link figures (config.json: GB/s and ns)
            extra = (f", tensor_parallel: {tp}, hidden_size: {spec['hidden']}, "
                     f"link_gb_per_s: {cfg['link_bw']}, link_latency_us: {cfg['link_latency'] / 1000}")
        if "experts" in spec:
            extra += (f", experts: {spec['experts']}, "
                      f"experts_per_token: {spec['experts_per_token']}, "
                      f"expert_parallel: {ep}, data_parallel: {dp}")
        step_time = (f"{{kind: layer_profile, path: {os.path.abspath(prof_dir)}, "
                     f"layers: {spec['layers']}, overhead_ms: {a.overhead_ms}{extra}}}")
        described = f"layer_profile over {prof_dir} x {spec['layers']} layers"
        if dp > 1:
            described += f", {dp} data-parallel ranks in lockstep, experts over {ep} GPUs"
    else:
        if dp > 1:
            sys.exit("--step-model fitted: the fitted forms time one GPU; a data-parallel "
                     "expert-parallel run needs --step-model profile")
        step_time = os.path.abspath(step_file)
        described = cal.stdout.splitlines()[0]
    blocks = (meta_all.get("kv_cache") or {}).get("num_gpu_blocks")
    if blocks:  # what the engine actually allocated (per rank)
        kv_capacity = f"capacity_tokens: {blocks * 16 * dp}"
    elif dp > 1:  # per rank: the weights it holds (its share of the experts), then the KV
        experts = spec["expert_parameters"]
        weights = (spec["parameters"] - experts + experts / ep) / tp
        per_token = 2 * spec["layers"] * spec["kv_heads"] * spec["head_dim"] * 2 / tp
        per_rank = int((gib * 2**30 * 0.9 - 2 * weights) // per_token)
        kv_capacity = f"capacity_tokens: {per_rank * dp}"
    else:
        kv_capacity = (f"memory: {{accelerator_gib: {gib:.4f}, utilization: 0.9, tensor_parallel: {tp}, "
                       f"parameters: {spec['parameters']}, layers: {spec['layers']}, "
                       f"kv_heads: {spec['kv_heads']}, head_dim: {spec['head_dim']}}}")
    trace = f"{os.path.abspath(run_dir)}/vllm/requests.jsonl"
    limits = (f"  max_num_seqs: {meta['max_num_seqs'] * dp}\n"
              f"  max_num_batched_tokens: {meta['max_num_batched_tokens'] * dp}\n")
    if a.scheduler == "vllm":
        # The engine's own scheduler_config where meta.json has it; otherwise vLLM 0.19's
        # defaults, which are the vllm policy's.
        sc = (meta_all.get("resolved_config") or {}).get("scheduler_config") or {}
        scheduler = "  kind: vllm\n" + limits
        if "long_prefill_token_threshold" in sc:
            scheduler += f"  long_prefill_token_threshold: {sc['long_prefill_token_threshold']}\n"
        elif dp > 1:  # a request runs on one rank: its chunk is at most that rank's budget
            scheduler += f"  long_prefill_token_threshold: {meta['max_num_batched_tokens']}\n"
        if "policy" in sc:
            scheduler += f"  scheduling_policy: {sc['policy']}\n"
        if "scheduler_reserve_full_isl" in sc:
            scheduler += (f"  scheduler_reserve_full_isl: "
                          f"{'true' if sc['scheduler_reserve_full_isl'] else 'false'}\n")
        # vLLM 0.19 schedules asynchronously unless told not to (the RTX 4090 run's
        # scheduler_config records async_scheduling: true; the others record no config).
        asyn = sc.get("async_scheduling", True) if a.async_scheduling is None else a.async_scheduling
        scheduler += f"  async_scheduling: {'true' if asyn else 'false'}\n"
        scheduler += f"  enable_prefix_caching: {'true' if a.prefix_caching else 'false'}\n"
    else:
        scheduler = "  kind: continuous\n" + limits + "  chunked_prefill: true\n"
    scenario = os.path.join(work, "scenario.yaml")
    with open(scenario, "w") as f:
        f.write(f"""workload:
  trace: {{path: {trace}}}
step_time: {step_time}
scheduler:
{scheduler}kv:
  policy: paged
  block_size: 16
  prefix_caching: {'true' if a.prefix_caching else 'false'}
  {kv_capacity}
""")
    return dict(scenario=scenario, run_dir=run_dir, meta_all=meta_all, meta=meta, tp=tp, dp=dp,
                ep=ep, trace=trace, described=described)


HOST_KINDS = ("vllm", "sglang", "trtllm")  # the scheduler kinds that read host_time


def host_modes(a):
    """The host-time settings to replay: [None] (key not set) unless --host-time was given."""
    mode = getattr(a, "host_time", None)
    return ["off", "on"] if mode == "both" else [mode]


def host_time_applies(a):
    """host_time is a key of the engine presets only (--scheduler continuous has none)."""
    return a.scheduler in HOST_KINDS


def host_time_set(a):
    """servesim's --set arguments for a.host_time ("off", "on" or None: nothing)."""
    mode = getattr(a, "host_time", None)
    if mode is None or not host_time_applies(a):
        return []
    if mode not in ("off", "on"):  # a caller that replays once (replay_vllm_operator.py)
        sys.exit(f"--host-time {mode}: this script replays one setting at a time; give off or on")
    return ["--set", f"scheduler.host_time={'true' if mode == 'on' else 'false'}"]


def with_host(a, mode):
    """A copy of the options with host_time set to one mode."""
    b = copy.copy(a)
    b.host_time = mode
    return b


def replay(a, gpu, model, work, steps=False):
    """Replays run <gpu>/<model> through servesim in `work`; returns the measured requests (in
    trace order), servesim's rows by id, its summary and what write_scenario says."""
    run = write_scenario(a, gpu, model, work)
    out_dir = os.path.join(work, "out")
    cmd = [a.servesim, "run", run["scenario"], "--out", out_dir, "--quiet"]
    for s in a.set:
        cmd += ["--set", s]
    cmd += host_time_set(a)
    if getattr(a, "api", None):
        cmd += ["--set", f"api.engine={a.api}"]
    if steps:
        cmd.append("--steps")
    subprocess.run(cmd, check=True)
    measured = [json.loads(l) for l in open(run["trace"]) if l.strip()]
    sim = {}
    with open(os.path.join(out_dir, "requests.csv")) as f:
        header = f.readline().strip().split(",")
        for line in f:
            row = dict(zip(header, line.strip().split(",")))
            sim[int(row["id"])] = row
    with open(os.path.join(out_dir, "summary.json")) as f:
        summary = json.load(f)
    run.update(measured=measured, sim=sim, summary=summary, out_dir=out_dir)
    return run


def latencies(run):
    """Per request (trace order), measured and simulated TTFT, TPOT and E2E in ms (TPOT None for
    one-token replies), by the data set's definitions: from queued_ts, the engine's side, so
    servesim's engine-side TTFT (server_ttft_s) and E2E (less the time outside the engine,
    ttft_s - server_ttft_s: zero without the api section)."""
    rows = []
    for i, r in enumerate(run["measured"]):
        s = run["sim"][i]
        one = r["output_toks"] <= 1
        outside = float(s["ttft_s"]) - float(s["server_ttft_s"])
        rows.append(dict(
            m_ttft=(r["first_token_ts"] - r["queued_ts"]) * 1e3,
            m_e2e=(r["last_token_ts"] - r["queued_ts"]) * 1e3,
            m_tpot=None if one else
            (r["last_token_ts"] - r["first_token_ts"]) / (r["output_toks"] - 1) * 1e3,
            s_ttft=float(s["server_ttft_s"]) * 1e3, s_e2e=(float(s["e2e_s"]) - outside) * 1e3,
            s_tpot=None if one else float(s["tpot_s"]) * 1e3))
    return rows


FIGURES = (("TTFT", "TTFT", "ttft"), ("TPOT", "TPOT", "tpot"), ("E2E", "Latency", "e2e"))
STATS = ("Mean", "Median", "P90", "P99")


def figure_stats(rows):
    """{(figure, stat): (measured, simulated)} over the requests (TPOT: more than one token)."""
    out = {}
    for name, _, key in FIGURES:
        pairs = [(r["m_" + key], r["s_" + key]) for r in rows if r["m_" + key] is not None]
        ms, ss = stats([p[0] for p in pairs]), stats([p[1] for p in pairs])
        for stat in STATS:
            out[(name, stat)] = (ms[stat], ss[stat])
    return out


def main():
    ap = argparse.ArgumentParser()
    add_options(ap)
    ap.add_argument("--gpu", default="RTXPRO6000")
    ap.add_argument("--model", default="Llama-3.1-8B")
    a = ap.parse_args()
    shared_data.require(a.data, __file__)
    base = a.keep or tempfile.mkdtemp()
    modes = host_modes(a)
    if modes != [None] and not host_time_applies(a):
        print(f"--host-time: n/a with --scheduler {a.scheduler} (host_time is a key of the "
              f"engine presets {', '.join(HOST_KINDS)}); replaying without it", file=sys.stderr)
        modes = [None]
    runs = {}
    for mode in modes:
        work = base if len(modes) == 1 else os.path.join(base, f"host_{mode}")
        runs[mode] = replay(with_host(a, mode), a.gpu, a.model, work)
    run = runs[modes[0]]
    meta, tp, dp, ep = run["meta"], run["tp"], run["dp"], run["ep"]
    rows = {mode: latencies(r) for mode, r in runs.items()}
    peer = peer_figures(f"{run['run_dir']}/validation/summary.txt")
    parallel = f"TP{tp}" + (f" x DP{dp} (EP{ep})" if dp > 1 else "")
    for mode, r in runs.items():
        summary = r["summary"]
        hits = (summary.get("prefix_cache") or {}).get("hit_tokens")
        label = "" if len(modes) == 1 else f" (host time {mode})"
        print(f"{a.gpu} / {a.model} / {parallel}: {len(rows[mode])} requests, max_num_seqs "
              f"{meta['max_num_seqs']}, max_num_batched_tokens {meta['max_num_batched_tokens']}"
              f"{' (per rank)' if dp > 1 else ''}; servesim{label} preempted "
              f"{summary['preempted_requests']} requests"
              + (f", prefix-cache hits {hits} tokens" if hits is not None else ""))
    print(f"step model: {run['described']}; scheduler: {a.scheduler}"
          + (f"; api.engine {a.api} (engine-side TTFT and E2E compared)" if a.api else ""))
    print()
    figs = {mode: figure_stats(rows[mode]) for mode in modes}
    if len(modes) == 1:
        print("| metric | vLLM (ms) | servesim (ms) | servesim error | peer simulator error |")
        print("|---|---|---|---|---|")
    else:
        print("| metric | vLLM (ms) | servesim, host time off (ms) | error | servesim, host time "
              "on (ms) | error | peer simulator error |")
        print("|---|---|---|---|---|---|---|")
    abs_err = {mode: [] for mode in modes}
    peer_abs = []
    for name, key, _ in FIGURES:
        for stat in STATS:
            m = figs[modes[0]][(name, stat)][0]
            cells = []
            for mode in modes:
                sim = figs[mode][(name, stat)][1]
                err = (sim - m) / m * 100
                abs_err[mode].append(abs(err))
                cells += [f"{sim:.1f}", f"{err:+.1f}%"]
            p = peer.get((key, stat))
            if p is not None:
                peer_abs.append(abs(p))
            print(f"| {name} {stat} | {m:.1f} | " + " | ".join(cells) + " | "
                  f"{'' if p is None else f'{p:+.1f}%'} |")
    print()
    for mode in modes:
        per_req = [abs(r["s_e2e"] - r["m_e2e"]) / r["m_e2e"] for r in rows[mode]]
        label = "" if len(modes) == 1 else f" (host time {mode})"
        print(f"per-request E2E absolute error{label}: median {pct(per_req, 50)*100:.1f}%, "
              f"p90 {pct(per_req, 90)*100:.1f}%")
    if len(modes) > 1:
        for mode in modes:
            e = abs_err[mode]
            print(f"mean |error| over the {len(e)} figures, host time {mode}: "
                  f"{sum(e) / len(e):.1f}%")
        if peer_abs:
            print(f"mean |error| of the peer simulator over its {len(peer_abs)} figures: "
                  f"{sum(peer_abs) / len(peer_abs):.1f}%")


if __name__ == "__main__":
    main()
