#!/usr/bin/env python3
"""Replay the inference-perf vLLM 0.15.1 runs on H100 SXM (issue 31) through servesim.

Data: ../shared/data/serving-runs/inference-perf-h100-vllm-0.15 (its README describes the runs
and the load generator). Two parts:

runs/   four CodeLlama-34B-Instruct TP2 runs; every stage's mean TTFT, TPOT, ITL and E2E.
peer    the 20 runs of first300_llmservingsim.csv (the first 300 requests of each, summary mean
        E2E, TTFT and ITL), servesim's error beside LLMServingSim 1.1's (its `mape`).

Each run is read from its own folder (runs/NAME: profile.yaml's shared_prefix lengths and load
stages, results/config.yaml's groups, exp-config.yaml's model matched to the catalogue by
scripts/catalogue.py and its engine limits), so a run added in that layout is replayed with no
change here; a peer's run takes the workload of the runs/ folder of the same workload name (the
README: the same parameters), and its model from the csv, matched the same way.

The trace: what the load generator sent. 10 groups x 10 prompts; prompt p = a group's system
prompt (system_prompt_len tokens) + its own question (question_len tokens, plus the tokens the
tokenizer's round trip adds: the measured mean prompt_len less the two where the run records it);
request k of a stage sends prompt order[k mod 100] (a fixed shuffle); the gaps are exponential,
rescaled so that a stage's rate x duration requests fill its duration; a stage starts 2 s after
the previous one drained (servesim's own drain time: the first stage is replayed alone first);
every reply is exactly output_len tokens (ignore_eos). Prefix identity: servesim CSV
`prefix_hash`, one hash per 16-token block (= vLLM's block size): the system prompt's full
blocks carry the group's hashes, every later block the prompt's own, so the prefix cache sees the
shared system prompt and the prompt repeated every 100 requests.

The scenario: scheduler kind vllm, version 0.15.1 (V1), the run's max_num_seqs and
max_num_batched_tokens, chunked prefill and prefix caching (V1 defaults), async scheduling and
host_time (vLLM's host time and CUDA graphs, defaults for 0.15); step_time kind operator
(AIConfigurator's H100 SXM vLLM tables, bf16); KV paged, block 16, sized from the H100 SXM and
the catalogue model at the run's gpu_memory_utilization; vLLM's CPU KV offloading as a kv.offload
host tier of 8 GiB over the ranks, where the run had it (runs/: all; the peer's: `cpu_offload`);
api.engine vllm-0.15: vLLM 0.19's measured front end (tokenization) and the client-side time outside
the engine this data set measures (response_overhead_ms, below). Not expressible: the 300 s client
timeout's abort (requests over 300 s are counted as failures, as the client does, but keep their
seats in the simulation), max_model_len (no prompt comes near it).

Like with like: the load generator timestamps every stream line and vLLM sends two a token, so
its TPOT is (last line - first token) / (2n + 1) and its ITL the mean over every line gap (about
half the real interval). servesim's figures in the same definitions, from its token times:
TPOT = (E2E - TTFT) / (2n + 1) per request (n = output tokens), ITL = the sum of (E2E - TTFT)
over the sum of (2n + 1). For the peer's runs itl_mean is (E2E mean - TTFT mean) / the client's
output count, so servesim's is (E2E mean - TTFT mean) / n (the client's count is not in the csv;
where it falls short of n the measured figure reads high, marked `*`).

The one fitted term: api.engine vllm-0.15's response_overhead_ms, the client-side time outside the
engine (HTTP, the first chunk's way to the client), is the median over runs/'s stages that do not
queue (mean TTFT under QUEUED_INTERVALS measured token intervals) of the measured mean TTFT less
servesim's with the term at 0; --part runs prints it. So those runs (FIT_RUNS) are not scored
with the preset: each is replayed with the term at 0 and its requests' token times moved by the
median of the *other* fitted runs' stages (leave one run out; the term adds the same time to
every token, so this is exactly a replay with that value). Any other run folder, and the peer's
runs, are scored with the preset: they are not in the fit. Nothing else is fitted to any of the
figures scored.

usage: scripts/replay_inference_perf.py [--servesim build/servesim] [--data ../shared/data]
           [--part runs|peer|all] [--only SUBSTRING] [--keep DIR] [--set KEY=VALUE ...]
       scripts/replay_inference_perf.py --self-check tests/data/inference_perf_tiny_profile.json
"""
import argparse
import csv
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

import catalogue  # scripts/catalogue.py: the catalogue as the scripts read it

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASET = "serving-runs/inference-perf-h100-vllm-0.15"
BLOCK = 16  # vLLM's KV block size, also the trace's hash block
TIMEOUT_S = 300.0  # the client's HTTP timeout: a request still unanswered is a failure
STAGE_GAP_S = 2.0  # between one stage's drain and the next stage's start
PEER_REQUESTS = 300  # the peer's figures are over the first 300 requests
PEER_REPLAY = 600  # replayed so that the 300th still shares its batches with later arrivals
QUEUED_INTERVALS = 5  # a stage whose mean TTFT passes this many token intervals queues: no fit
# The runs/ folders api.engine vllm-0.15's client-side term was fitted on (sim/api_latency.cpp):
# each is scored leaving itself out of the fit; any other run folder with the preset as it is.
FIT_RUNS = ("20260218-150304-codellama-34b-tp2-general",
            "20260218-150956-codellama-34b-tp2-codegen",
            "20260218-155500-codellama-34b-tp2-roleplay",
            "20260218-160939-codellama-34b-tp2-reasoning")

GROUPS = (10, 10)  # groups x prompts a group the generator sent (the README), if not recorded


def run_workload(run_dir):
    """A runs/ folder's workload, from its own files: the shared_prefix lengths and load stages
    of profile.yaml (JSON), and the groups x prompts the generator sent (results/config.yaml;
    the version that ran ignored the profile's counts). A dict: system, question, output,
    stages [(rate, duration)], groups (groups, prompts a group)."""
    prof = json.load(open(os.path.join(run_dir, "profile.yaml")))
    sp = prof["data"]["shared_prefix"]
    stages = [(float(s["rate"]), float(s["duration"])) for s in prof["load"]["stages"]]
    groups = GROUPS
    sent = os.path.join(run_dir, "results", "config.yaml")
    if os.path.exists(sent):
        text = open(sent).read()
        g = re.search(r"num_groups:\s*(\d+)", text)
        n = re.search(r"num_prompts_per_group:\s*(\d+)", text)
        if g and n:
            groups = (int(g.group(1)), int(n.group(1)))
    return dict(system=int(sp["system_prompt_len"]), question=int(sp["question_len"]),
                output=int(sp["output_len"]), stages=stages, groups=groups)


def run_folders(data):
    """runs/ of the data set: (folder name, workload name: the name's last word, path)."""
    root = os.path.join(data, DATASET, "runs")
    return [(n, n.rsplit("-", 1)[1], os.path.join(root, n)) for n in sorted(os.listdir(root))]


def run_model(name, where):
    """The catalogue model a run names (its Hugging Face checkpoint, scripts/catalogue.py)."""
    model, why = catalogue.match(name, "models")
    if why:
        sys.exit(f"{where}: model {name!r}: {why}")
    return model


def measured_extra(run_dir, wl):
    """The tokenizer's round trip: a stage's measured mean prompt_len less the workload's system
    and question lengths (a workload figure of that model's tokenizer)."""
    stage = json.load(open(os.path.join(run_dir, "results", "stage_0_lifecycle_metrics.json")))
    return round(stage["successes"]["prompt_len"]["mean"]) - wl["system"] - wl["question"]


def make_trace(system, question, output, stages, seed=1, extra=0, stage_starts=None,
               limit=None, groups=GROUPS):
    """The load generator's requests: a list of dicts (arrival_s, prompt, output, hashes,
    stage). `extra` tokens (the tokenizer's round trip) are added to each question;
    stage_starts[i] is stage i's start (default: back to back); groups: (groups, prompts a
    group)."""
    rng = random.Random(seed)
    per_group = groups[1]
    prompts = groups[0] * per_group
    order = list(range(prompts))
    rng.shuffle(order)  # the fixed shuffled order of the prompts
    prompt = system + question + extra
    rows = []
    start = 0.0
    for i, (rate, duration) in enumerate(stages):
        if stage_starts is not None:
            start = stage_starts[i]
        n = int(round(rate * duration))
        gaps = [rng.expovariate(rate) for _ in range(n)]
        scale = duration / sum(gaps)  # the stage's requests fill its duration exactly
        t = 0.0
        for k in range(n):
            p = order[k % prompts]
            group = p // per_group
            hashes = []
            for b in range((prompt + BLOCK - 1) // BLOCK):
                if (b + 1) * BLOCK <= system:  # a full block of the group's system prompt
                    hashes.append(1000 + group * 1000 + b)
                else:  # holds some of the prompt's own question
                    hashes.append(1_000_000 + p * 1000 + b)
            rows.append(dict(arrival_s=start + t, prompt=prompt, output=output, hashes=hashes,
                             stage=i))
            t += gaps[k] * scale
            if limit is not None and len(rows) >= limit:
                return rows
        start += duration
    return rows


def write_trace(rows, path):
    with open(path, "w") as f:
        f.write("arrival_s,prompt_tokens,output_tokens,prefix_hash\n")
        for r in rows:
            f.write(f"{r['arrival_s']:.6f},{r['prompt']},{r['output']},"
                    f"{';'.join(str(h) for h in r['hashes'])}\n")


# Models timed by the shape-aware roofline (fit-all) instead of the tables: none now. Mixtral-8x22B
# at TP8 (48 query / 8 KV heads: 6 / 1 a GPU, a group size vLLM's H100 tables did not measure) is
# read between their groups 4 and 8 (models/operator_table_readers.h, attention_substitute).
ROOFLINE_MODELS = set()


# vLLM's native CPU KV offloading (the OffloadingConnector, `--kv-offloading-size` GiB in all,
# shared out over the tensor-parallel ranks): a host tier below the GPU's prefix cache. PCIe 5.0
# x16 carries about 50 GB/s of its 64 GB/s host to device (as configs/examples/kv-offload-*).
# Its loads run beside the forward passes, so `overlap: layerwise`; it reloads every hit.
OFFLOAD_GIB = 8.0  # the runs/ README: "an 8 GiB offloading connector"


def offload_section(offload_gib, tp):
    if not offload_gib:
        return ""
    return f"""  offload:
    overlap: layerwise
    reload: always
    tiers: [{{name: host, capacity_gib: {offload_gib / tp:g}, bandwidth_gb_s: 50, latency_us: 20}}]
"""


def scenario(trace, model, tp, mnbt, mns, util, offload_gib=0.0, response_ms=None):
    tables = os.path.join(ROOT, "data/timings/aiconfigurator")
    ops = ("{source: roofline, fit: fit-all}" if model in ROOFLINE_MODELS else
           f"{{source: tables, path: {tables}, gpu: h100_sxm, engine: vllm}}")
    return f"""workload:
  trace: {{path: {trace}, hash_block_tokens: {BLOCK}}}
step_time:
  kind: operator
  model: {model}
  hardware: h100-sxm
  tensor_parallel: {tp}
  weight_dtype: bf16
  kv_dtype: bf16
  operators: {ops}
scheduler:
  kind: vllm
  version: "0.15.1"
  max_num_seqs: {mns}
  max_num_batched_tokens: {mnbt}
  async_scheduling: true
  enable_prefix_caching: true
  host_time: true
kv:
  policy: paged
  block_size: {BLOCK}
  prefix_caching: true
  memory: {{hardware: h100-sxm, model: {model}, utilization: {util}, tensor_parallel: {tp},
           weight_dtype: bf16, kv_dtype: bf16}}
{offload_section(offload_gib, tp)}api: {{engine: vllm-0.15{api_response(response_ms)}}}
seed: 1
"""


def api_response(response_ms):
    """The api section's override of the preset's client-side time, if any."""
    return "" if response_ms is None else f", response_overhead_ms: {response_ms:g}"


def simulate(a, rows, setup, work):
    """Runs servesim on `rows`; returns one dict per request (trace order) with ttft, e2e (s)."""
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, "trace.csv")
    write_trace(rows, trace)
    path = os.path.join(work, "scenario.yaml")
    with open(path, "w") as f:
        f.write(scenario(trace, **setup))
    out = os.path.join(work, "out")
    cmd = [a.servesim, "run", path, "--out", out, "--quiet"]
    for s in a.set:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    sim = []
    with open(os.path.join(out, "requests.csv")) as f:
        for r in csv.DictReader(f):
            sim.append(r)
    sim.sort(key=lambda r: int(r["id"]))
    return [dict(ttft=float(r["ttft_s"]), e2e=float(r["e2e_s"]), queue=float(r["queue_s"]),
                 done=r["status"] == "finished") for r in sim]


def replay_run(a, wl, setup, work, extra, limit=None):
    """The trace of workload `wl` (run_workload's dict) with servesim's own drain between
    stages; returns rows (with the simulated ttft and e2e merged in) and the stage starts."""
    system, question, output, stages = wl["system"], wl["question"], wl["output"], wl["stages"]
    groups = wl["groups"]
    if limit is not None:  # the first requests of the first stage only: no drain to find
        stages = stages[:1]
    starts = [0.0]
    for i in range(1, len(stages)):  # replay the stages so far alone to find the drain
        rows = [r for r in make_trace(system, question, output, stages, a.seed, extra, starts +
                                      [0.0] * (len(stages) - len(starts)), groups=groups)
                if r["stage"] < i]
        sim = simulate(a, rows, setup, os.path.join(work, f"drain{i}"))
        starts.append(max(r["arrival_s"] + s["e2e"] for r, s in zip(rows, sim)) + STAGE_GAP_S)
    rows = make_trace(system, question, output, stages, a.seed, extra, starts, limit, groups)
    for r, s in zip(rows, simulate(a, rows, setup, os.path.join(work, "full"))):
        r.update(s)
    return rows, starts


def figures(rows):
    """Mean TTFT, TPOT, ITL (load generator's definitions) and E2E in ms over the requests that
    finished within the client's timeout; and how many did not."""
    ok = [r for r in rows if r["done"] and r["e2e"] <= TIMEOUT_S]
    span = [r["e2e"] - r["ttft"] for r in ok]
    lines = [2 * r["output"] + 1 for r in ok]
    return dict(ttft=statistics.mean(r["ttft"] for r in ok) * 1e3,
                tpot=statistics.mean(s / n for s, n in zip(span, lines)) * 1e3,
                itl=sum(span) / sum(lines) * 1e3,
                e2e=statistics.mean(r["e2e"] for r in ok) * 1e3), len(rows) - len(ok)


def err(sim, measured):
    return (sim - measured) / measured * 100


def summary(errors, label):
    n = len(errors)
    within = sum(1 for e in errors if abs(e) <= 10)
    med = statistics.median(abs(e) for e in errors)
    print(f"{label}: {within} of {n} figures within 10%, median |error| {med:.1f}%")


def run_cases(data):
    """Each runs/ folder as a replay: (name, workload name, workload, setup, extra prompt tokens,
    measured stage files), all read from the folder."""
    for name, wl, run_dir in run_folders(data):
        exp = dict(l.split(": ", 1) for l in open(os.path.join(run_dir, "exp-config.yaml"))
                   .read().splitlines() if ": " in l)
        stage_files = sorted(f for f in os.listdir(os.path.join(run_dir, "results"))
                             if f.startswith("stage_"))
        measured = [json.load(open(os.path.join(run_dir, "results", f))) for f in stage_files]
        work = run_workload(run_dir)
        setup = dict(model=run_model(exp["model"].strip(), f"{run_dir}/exp-config.yaml"),
                     tp=int(exp["tensor_parallelism"]),
                     mnbt=int(exp["max_num_batched_tokens"]), mns=int(exp["max_num_seqs"]),
                     util=float(exp.get("gpu_memory_utilization", "0.9")),
                     offload_gib=OFFLOAD_GIB)
        # The tokenizer's round trip (prompt_len counts the whole prompt): a workload figure.
        yield name, wl, work, setup, measured_extra(run_dir, work), measured


def peer_cases(data):
    """The peer's runs (first300_llmservingsim.csv) as replays, in the csv's order: (folder,
    its csv rows, workload, setup, extra prompt tokens), or (folder, rows, None, why, 0) for one
    whose workload runs/ does not describe. The workload by name is the runs/ folder's (the
    README: the same parameters); the round trip's extra prompt tokens where runs/ measured them
    for the same model and workload (CodeLlama's tokenizer), else 0."""
    path = os.path.join(data, DATASET, "first300_llmservingsim.csv")
    exps = {}
    for r in csv.DictReader(open(path)):
        exps.setdefault(r["experiment_folder"], []).append(r)
    workloads, extras = {}, {}
    for _, wl, work, setup, extra, _ in run_cases(data):
        workloads[wl] = work
        extras[(setup["model"], wl)] = extra
    for folder, recs in exps.items():
        r0 = recs[0]
        if r0["workload"] not in workloads:
            yield folder, recs, None, (f"{r0['workload']}: its workload parameters are not "
                                       "described in the data set"), 0
            continue
        model = run_model(r0["model"], f"{path}: {folder}")
        setup = dict(model=model, tp=int(float(r0["tp"])),
                     mnbt=int(float(r0["max_num_batched_tokens"])), mns=128,
                     util=float(r0["gpu_mem_util"]),
                     offload_gib=OFFLOAD_GIB if r0["cpu_offload"] == "True" else 0.0)
        yield folder, recs, workloads[r0["workload"]], setup, extras.get((model, r0["workload"]), 0)


def label(name):
    """A runs/ folder's name without its date and time: model, TP and workload."""
    return re.sub(r"^[0-9]{8}-[0-9]{6}-", "", name)


def part_runs(a, base):
    """Every stage of every runs/ folder. The runs the client-side term was fitted on (FIT_RUNS)
    are replayed with it at 0, the fit is printed, and each is scored with the fit on the
    others' stages that do not queue; any other run is replayed with the preset."""
    own_api = any(x.startswith("api.") for x in a.set)  # the user's api: scored as simulated
    replays = []
    for name, wl, work, setup, extra, measured in run_cases(a.data):
        fitted = name in FIT_RUNS and not own_api
        if a.only and a.only not in name and not fitted:  # the fit needs every fitted run
            continue
        setup = dict(setup, response_ms=0.0 if fitted else None)
        rows, starts = replay_run(a, work, setup, os.path.join(base, name), extra)
        stages = []
        for i, m in enumerate(measured):
            lat = m["successes"]["latency"]
            meas = dict(ttft=lat["time_to_first_token"]["mean"] * 1e3,
                        tpot=lat["time_per_output_token"]["mean"] * 1e3,
                        itl=lat["inter_token_latency"]["mean"] * 1e3,
                        e2e=lat["request_latency"]["mean"] * 1e3)
            stage_rows = [r for r in rows if r["stage"] == i]
            sim0, _ = figures(stage_rows)
            # The load generator's TPOT is half the real token interval.
            queued = meas["ttft"] > QUEUED_INTERVALS * 2 * meas["tpot"]
            stages.append(dict(rows=stage_rows, meas=meas, m=m, queued=queued,
                               residual=meas["ttft"] - sim0["ttft"]))
        replays.append((name, wl, work, extra, starts, stages))
    fit = {name: [s["residual"] for s in stages if not s["queued"]]
           for name, _, _, _, _, stages in replays if name in FIT_RUNS and not own_api}
    every = [x for v in fit.values() for x in v]

    def held_out(name):
        """The term a fitted run is scored with: the median over the other fitted runs."""
        if name not in fit:
            return 0.0  # replayed with the preset (or the user's api) already
        others = [x for n, v in fit.items() if n != name for x in v]
        return statistics.median(others) if others else 0.0

    replays = [r for r in replays if not a.only or a.only in r[0]]

    print("| run | stage | rate | figure | measured (ms) | servesim (ms) | error |")
    print("|---|---|---|---|---|---|---|")
    errors = {k: [] for k in ("ttft", "tpot", "itl", "e2e")}
    notes = []
    for name, wl, work, extra, starts, stages in replays:
        shift = held_out(name) / 1e3
        for i, st in enumerate(stages):
            moved = [dict(r, ttft=r["ttft"] + shift, e2e=r["e2e"] + shift) for r in st["rows"]]
            sim, failed = figures(moved)
            meas, m = st["meas"], st["m"]
            rate = work["stages"][i][0]
            for k in ("ttft", "tpot", "itl", "e2e"):
                e = err(sim[k], meas[k])
                errors[k].append(e)
                print(f"| {label(name)} | {i} | {rate:g}/s | {k.upper()} | {meas[k]:.2f} | "
                      f"{sim[k]:.2f} | {e:+.1f}% |")
            notes.append(f"{label(name)} stage {i}: {m['failures']['count']} measured failures, "
                         f"{failed} servesim requests over {TIMEOUT_S:.0f} s"
                         + (f"; starts {starts[i]:.1f} s" if i else "")
                         + f"; prompt {work['system']}+{work['question']}+{extra} tokens"
                         + ("; queues (not in the fit)" if st["queued"] else ""))
    print()
    for n in notes:
        print(n)
    print()
    if own_api:
        print("the api section as --set gives it: no term fitted, figures as simulated")
    if every:
        print(f"client-side time outside the engine (api.engine vllm-0.15's "
              f"response_overhead_ms), fitted: measured mean TTFT less servesim's without it, "
              f"median over the {len(every)} stages that do not queue: "
              f"{statistics.median(every):.2f} ms (each: "
              f"{', '.join(f'{x:.2f}' for x in every)})")
        print("each fitted run above is scored with the median of the other runs' stages (leave "
              "one run out): " + ", ".join(f"{label(n)} {held_out(n):.2f} ms"
                                           for n, _, _, _, _, _ in replays if n in fit))
    others = [label(n) for n, _, _, _, _, _ in replays if n not in fit]
    if others and not own_api:
        print(f"replayed with the preset (not in the fit): {', '.join(others)}")
    print()
    for k, v in errors.items():
        summary(v, f"{k.upper()} (runs/, per stage)")
    summary([e for v in errors.values() for e in v], "all runs/ figures")


def part_peer(a, base):
    print("| experiment | model | TP | mnbt | util | offload | figure | measured (ms) | "
          "servesim (ms) | servesim error | peer error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    ours, peer, closer, count, skipped = {}, {}, 0, 0, []
    for folder, recs, work, setup, extra in peer_cases(a.data):
        r0 = recs[0]
        if a.only and a.only not in folder:
            continue
        if work is None:
            skipped.append(f"{folder} ({setup})")
            continue
        model = setup["model"]
        rows, _ = replay_run(a, work, setup, os.path.join(base, folder), extra,
                             limit=PEER_REPLAY)
        sim_rows = rows[:PEER_REQUESTS]
        ok = [r for r in sim_rows if r["done"] and r["e2e"] <= TIMEOUT_S]
        ttft = statistics.mean(r["ttft"] for r in ok) * 1e3
        e2e = statistics.mean(r["e2e"] for r in ok) * 1e3
        sim = dict(e2e_mean=e2e, ttft_mean=ttft, itl_mean=(e2e - ttft) / rows[0]["output"])
        meas = {x["metric_name"]: x for x in recs}
        # The client's output count implied by the measured figures, to flag the ITL definition.
        implied = ((float(meas["e2e_mean"]["actual"]) - float(meas["ttft_mean"]["actual"]))
                   / float(meas["itl_mean"]["actual"]))
        for k in ("e2e_mean", "ttft_mean", "itl_mean"):
            m, p = float(meas[k]["actual"]), float(meas[k]["mape"])
            e = err(sim[k], m)
            ours.setdefault(k, []).append(e)
            peer.setdefault(k, []).append(p)
            count += 1
            closer += abs(e) < p
            mark = " *" if k == "itl_mean" and implied < 0.98 * rows[0]["output"] else ""
            print(f"| {folder} | {model} | {setup['tp']} | {setup['mnbt']} | {setup['util']:g} | "
                  f"{r0['cpu_offload']} | {k} | {m:.1f}{mark} | {sim[k]:.1f} | {e:+.1f}% | "
                  f"{p:.1f}% |")
    print()
    for s in skipped:
        print(f"skipped: {s}")
    print("* the client counted fewer output tokens than vLLM generated (implied by the measured "
          "means), so the measured ITL reads high")
    print()
    for k in ours:
        summary(ours[k], f"{k} (peer's runs, first 300)")
        print(f"  peer (LLMServingSim): median |error| {statistics.median(peer[k]):.1f}%; "
              f"servesim closer on {sum(abs(e) < p for e, p in zip(ours[k], peer[k]))} of "
              f"{len(peer[k])}")
    print(f"servesim closer than the peer on {closer} of {count} figures")


def self_check(a):
    """The trace generator on the tiny profile of tests/data (no ../shared): counts, spans,
    prompt cycle and shared blocks; then servesim replays it and its prefix cache must find
    exactly the blocks the load generator's prompts share."""
    prof = json.load(open(a.self_check))
    system, question, extra = prof["system_prompt_len"], prof["question_len"], prof["extra_tokens"]
    stages = [tuple(s) for s in prof["stages"]]
    rows = make_trace(system, question, prof["output_len"], stages, seed=3, extra=extra,
                      stage_starts=prof["stage_starts"])
    prompt = system + question + extra
    counts = [int(round(r * d)) for r, d in stages]
    assert len(rows) == sum(counts), len(rows)
    for i, (start, (_, duration)) in enumerate(zip(prof["stage_starts"], stages)):
        st = [r for r in rows if r["stage"] == i]
        assert len(st) == counts[i] and st[0]["arrival_s"] == start
        assert st[-1]["arrival_s"] < start + duration
    assert all(x["arrival_s"] <= y["arrival_s"] for x, y in zip(rows, rows[1:]))
    blocks = (prompt + BLOCK - 1) // BLOCK
    assert all(r["prompt"] == prompt and len(r["hashes"]) == blocks for r in rows)
    shared = system // BLOCK  # the system prompt's full blocks
    first = [r for r in rows if r["stage"] == 0]
    assert first[0]["hashes"] == first[100]["hashes"] != first[1]["hashes"]
    groups = {}
    for r in first[:100]:
        groups.setdefault(tuple(r["hashes"][:shared]), set()).add(tuple(r["hashes"][shared:]))
    assert len(groups) == 10 and all(len(g) == 10 for g in groups.values())
    # What an unbounded prefix cache finds: the full blocks before the one holding the last
    # prompt token; a prompt seen before finds them all, a new prompt of a seen group the system
    # prompt's full blocks, a group's first prompt nothing.
    reusable = (prompt - 1) // BLOCK
    seen_p, seen_g, hits = set(), set(), 0
    for r in rows:
        key, group = tuple(r["hashes"]), tuple(r["hashes"][:shared])
        hits += BLOCK * (reusable if key in seen_p else min(shared, reusable) if group in seen_g
                         else 0)
        seen_p.add(key)
        seen_g.add(group)
    setup = dict(model="llama-3.1-8b", tp=1, mnbt=2048, mns=128, util=0.9)
    with tempfile.TemporaryDirectory(prefix="iperf-check-") as work:
        sim = simulate(a, rows, setup, work)
        got = json.load(open(os.path.join(work, "out", "summary.json")))["prefix_cache"]
    assert len(sim) == len(rows) and all(s["done"] for s in sim)
    assert got["hit_tokens"] == hits and got["queried_tokens"] == prompt * len(rows), (got, hits)
    print(f"self-check: {len(rows)} requests in {len(stages)} stages, {blocks} blocks a prompt "
          f"({shared} shared by its group); servesim's prefix cache found {hits} of "
          f"{prompt * len(rows)} prompt tokens, as the prompts share")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--part", choices=["runs", "peer", "all"], default="all")
    ap.add_argument("--only", help="replay only the runs whose folder holds this")
    ap.add_argument("--keep", help="keep the generated traces, scenarios and outputs here")
    ap.add_argument("--seed", type=int, default=1, help="the arrivals' and shuffle's seed")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="passed on to servesim run (repeatable), for experiments")
    ap.add_argument("--self-check", metavar="PROFILE",
                    help="check the trace generator on a tiny profile (tests/data/"
                         "inference_perf_tiny_profile.json) and servesim's prefix cache on it")
    a = ap.parse_args()
    if a.self_check:
        self_check(a)
        return
    if not os.path.isdir(os.path.join(a.data, DATASET)):
        print(f"skipped: {os.path.join(a.data, DATASET)} missing (the project's shared data "
              "collection beside the checkout; give --data)")
        return
    with tempfile.TemporaryDirectory(prefix="iperf-") as scratch:
        base = a.keep or scratch
        if a.part in ("runs", "all"):
            part_runs(a, base)
        if a.part == "all":
            print()
        if a.part in ("peer", "all"):
            part_peer(a, base)


if __name__ == "__main__":
    main()
