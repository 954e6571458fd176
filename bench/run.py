#!/usr/bin/env python3
"""Whole-run benchmarks of servesim: wall time, simulated time, real-time factor, steps,
output tokens per wall second and peak resident memory of each run.

usage: bench/run.py [--servesim build/servesim] [--quick | --full] [--repeat N]

  default  the Azure conversation trace under every policy, the Vidur comparison, and
           1 million synthetic requests at 80% load
  --quick  the trace scenarios only (about a second)
  --full   adds the scaling table (10^4 .. 10^7 synthetic requests) and a 10-million-row
           trace file streamed from disk (written to a temporary folder first, ~300 MB)

Each run is its own process (wait4 gives its own peak RSS); the wall time is the best of
--repeat runs (default 3; 1 for runs of a million requests or more) because these machines are
shared and noisy. Results go to a temporary folder; only figures are printed.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AZURE = os.path.join(HERE, "configs", "azure-conv-llama3.1-8b-h100.yaml")
VIDUR = os.path.join(HERE, "configs", "vidur-azure-conv-llama2-7b-a100.yaml")
SYNTH = os.path.join(HERE, "configs", "synthetic-chat-llama3.1-8b-h100.yaml")

# Policies on the Azure trace, as --set overrides of its continuous baseline.
AZURE_RUNS = [
    ("continuous", []),
    ("continuous, roofline step model", ["step_time={kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16, bandwidth_efficiency: 0.8, compute_efficiency: 0.6, overhead_ms: 0}"]),
    ("static, batch 32", ["scheduler={kind: static, max_batch_size: 32}"]),
    ("dynamic, batch 32, 50 ms", ["scheduler={kind: dynamic, max_batch_size: 32, max_queue_delay_ms: 50}"]),
    ("continuous, paged KV under pressure", ["kv={policy: paged, block_size: 16, capacity_tokens: 24576}"]),
]


def run_once(servesim, config, sets, out_dir, csv=True):
    cmd = [servesim, "run", config, "--out", out_dir, "--quiet"]
    for s in sets:
        cmd += ["--set", s]
    if not csv:
        cmd.append("--no-requests-csv")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, rusage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    # wait4 has reaped the process, so its status comes from wait4, not proc.wait().
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed:\n{err}")
    with open(os.path.join(out_dir, "summary.json")) as f:
        summary = json.load(f)
    return wall, rusage.ru_maxrss / 1024.0, summary, cmd


def measure(servesim, name, config, sets, repeat, csv=True):
    with tempfile.TemporaryDirectory() as out:
        best = None
        for _ in range(repeat):
            wall, rss, summary, cmd = run_once(servesim, config, sets, out, csv)
            if best is None or wall < best[0]:
                best = (wall, rss, summary, cmd)
    wall, rss, s, cmd = best
    sim_s = s["duration_s"]
    row = {
        "scenario": name,
        "requests": s["requests"],
        "wall_s": wall,
        "sim_s": sim_s,
        "realtime_x": sim_s / wall if wall > 0 else float("inf"),
        "steps": s["steps"],
        "steps_per_s": s["steps"] / wall,
        "out_tok_per_wall_s": s["output_tokens"] / wall,
        "peak_rss_mib": rss,
        "preemptions": s["preemptions"],
        "command": " ".join(a if " " not in a else f"'{a}'" for a in cmd),
    }
    print_row(row)
    return row


HEADER = (f"{'scenario':<44}{'requests':>10}{'wall s':>9}{'sim s':>11}{'x realtime':>12}"
          f"{'steps':>11}{'steps/s':>11}{'out tok/s':>12}{'RSS MiB':>9}")


def print_row(r):
    print(f"{r['scenario']:<44}{r['requests']:>10}{r['wall_s']:>9.3f}{r['sim_s']:>11.1f}"
          f"{r['realtime_x']:>12,.0f}{r['steps']:>11}{r['steps_per_s']:>11,.0f}"
          f"{r['out_tok_per_wall_s']:>12,.0f}{r['peak_rss_mib']:>9.1f}", flush=True)


def saturation_rate(servesim):
    """Requests/s the synthetic workload's deployment sustains: 20,000 requests arriving far
    faster than it can serve them, finished requests over the time they took."""
    with tempfile.TemporaryDirectory() as out:
        _, _, s, _ = run_once(servesim, SYNTH, ["workload.synthetic.requests=20000",
                                                "workload.synthetic.arrival.rate_per_s=1000"],
                              out, csv=False)
    return s["finished"] / s["duration_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servesim", default=os.path.join(HERE, "..", "build", "servesim"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    exe = os.path.abspath(args.servesim)
    if not os.access(exe, os.X_OK):
        sys.exit(f"bench: no servesim at {exe} (build first, or pass --servesim)")
    print(f"servesim: {exe}")
    print(f"machine: {os.cpu_count()} CPUs, {os.uname().machine}, {platform_cpu()}")
    print(HEADER)
    rows = [measure(exe, f"azure conv: {n}", AZURE, sets, args.repeat) for n, sets in AZURE_RUNS]
    rows.append(measure(exe, "vidur comparison: llama-2-7b a100", VIDUR, [], args.repeat))
    if args.quick:
        return
    sat = saturation_rate(exe)
    rate = 0.8 * sat
    print(f"synthetic: saturation {sat:.2f} requests/s; runs at 80% load = {rate:.2f} requests/s")
    sizes = [10**6]
    if args.full:
        sizes = [10**4, 10**5, 10**6, 10**7]
    for n in sizes:
        sets = [f"workload.synthetic.requests={n}", f"workload.synthetic.arrival.rate_per_s={rate:.4f}"]
        rows.append(measure(exe, f"synthetic {n:,} at 80% load, summary only", SYNTH, sets,
                            args.repeat if n < 10**6 else 1, csv=False))
        if n == 10**6:
            rows.append(measure(exe, f"synthetic {n:,} at 80% load, with requests.csv", SYNTH,
                                sets, 1))
    if args.full:
        rows.append(big_trace(exe, rate))
    print("\ncommands:")
    for r in rows:
        print(f"  {r['scenario']}: {r['command']}")


def big_trace(exe, rate):
    """A 10-million-row servesim CSV trace (Poisson arrivals at `rate`, the synthetic
    workload's lognormal lengths), streamed through the simulator from disk."""
    import math
    import random
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace-10m.csv")
        t = 0.0
        with open(path, "w") as f:
            f.write("arrival_s,prompt_tokens,output_tokens\n")
            lines = []
            for _ in range(10**7):
                t += rng.expovariate(rate)
                p = min(8192, max(2, round(1020 * math.exp(0.8 * rng.gauss(0, 1)))))
                o = min(1000, max(1, round(129 * math.exp(rng.gauss(0, 1)))))
                lines.append(f"{t:.6f},{p},{o}\n")
                if len(lines) == 100000:
                    f.writelines(lines)
                    lines = []
            f.writelines(lines)
        config = os.path.join(tmp, "trace-10m.yaml")
        with open(SYNTH) as src, open(config, "w") as dst:
            text = src.read()
            start = text.index("workload:")
            end = text.index("step_time:")
            # The operator tables' path is relative to bench/configs/: make it absolute here.
            tables = "../../data/timings/aiconfigurator"
            rest = text[end:].replace(f"path: {tables}", "path: " + os.path.normpath(
                os.path.join(HERE, "configs", tables)))
            dst.write(text[:start] + f"workload:\n  trace: {{path: {path}}}\n" + rest)
        size_mb = os.path.getsize(path) / 1e6
        return measure(exe, f"trace file 10,000,000 rows ({size_mb:.0f} MB), summary only",
                       config, [], 1, csv=False)


def platform_cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    main()
