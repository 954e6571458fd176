#!/usr/bin/env python3
"""Fleet benchmarks: a day of chat traffic with a daily curve on 64, 256 and 1,000 replicas.

For each replica count, bench/fleet/fleet-base.yaml is run with the request count and mean rate
sized to the fleet (--rate-per-replica requests/s per replica on average over the day, --hours of
simulated time from --start-h), by the sequential engine and by the parallel one on each
--threads count (an entry rN runs N MPI ranks of one thread each under mpirun, rNxT N ranks of T
threads). Prints, per run: wall time, steps, steps per second, peak RSS (/usr/bin/time -v),
speed-up and parallel efficiency against the sequential run, and whether summary.json is byte for
byte the sequential run's. Then fits the scaling model of docs/performance.md#parallel-engine on
the sequential, 1- and 2-thread runs (the engine's own split of its time, SERVESIM_LOG=info) and predicts 16
and 64 cores. Writes every figure to OUT/fleet.json.

  python3 bench/fleet/fleet.py --replicas 64,256,1000 --hours 24            # the whole day
  python3 bench/fleet/fleet.py --replicas 64 --hours 0.25 --threads 0,1,2   # a quick look
  python3 bench/fleet/fleet.py --replicas 64,256 --hours 0.1 --threads 0,1,2,r2  # and 2 ranks
  python3 bench/fleet/fleet.py --replicas 256 --hours 0.5 --start-h 14 --threads 0,2,r2 --repeat 5

With --repeat N each --threads entry runs N times, the entries taking turns (0, 2, r2, 0, 2, r2,
...) so that a change in the machine's load falls on all of them alike; each entry's row is its
median run by wall time (all N wall times are printed below it), and speed-ups are taken between
medians.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TIMING = re.compile(r"parallel engine: (\d+) shards, (\d+) windows; routing ([\d.]+) s, "
                    r"shards ([\d.]+) s, merging ([\d.]+) s; cpu: routing ([\d.]+) s, "
                    r"shards ([\d.]+) s, merging ([\d.]+) s(?:; critical path ([\d.]+) s)?")


def parse_run(entry):
    """'2' -> (1 rank, 2 threads); 'r2' -> (2 ranks, 1 thread each); 'r2x2' -> (2, 2)."""
    if entry.startswith("r"):
        ranks, _, threads = entry[1:].partition("x")
        return int(ranks), int(threads or 1)
    return 1, int(entry)


def run_one(args, replicas, threads, out, ranks=1):
    seconds = args.hours * 3600.0
    rate = args.rate_per_replica * replicas
    if args.workload == "azure":  # the trace's hour, scaled to the fleet, repeated over --hours
        workload = ["--set", f"workload.transform.target_rate_per_s={rate}",
                    "--set", f"workload.transform.repeat_to_s={seconds}"]
    else:
        workload = ["--set", f"workload.synthetic.requests={max(1, int(rate * seconds))}",
                    "--set", f"workload.synthetic.arrival.mean_rate_per_s={rate}",
                    "--set", f"workload.synthetic.start_s={args.start_h * 3600.0}"]
    cmd = [args.servesim, "run", os.path.join(HERE, f"fleet-{args.workload}.yaml"), "--out", out,
           "--no-requests-csv", "--no-progress", "-q",
           "--set", f"cluster.replicas={replicas}"] + workload + [
           # The memory check's bound on requests held at once: far above what a fleet at
           # this load holds (a few per replica), far below the default 2,000,000 it would
           # otherwise plan memory for.
           "--max-queued", str(200 * replicas),
           "--threads", str(threads)]
    if ranks > 1:
        # Each rank reads the whole workload; rank 0 alone writes (docs/cluster.md#mpi-ranks).
        cmd = [args.mpirun, "--oversubscribe", "-n", str(ranks)] + cmd
    env = dict(os.environ, SERVESIM_LOG="info")
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"fleet.py: {' '.join(cmd)} failed:\n{p.stderr}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", p.stderr)
    h, m, s = wall.groups()
    wall_s = (int(h or 0) * 60 + int(m)) * 60 + float(s)
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    cpu_s = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", p.stderr).group(1))
                for k in ("User", "System"))
    with open(os.path.join(out, "summary.json"), "rb") as f:
        raw = f.read()
    summary = json.loads(raw)
    r = {"replicas": replicas, "threads": threads, "ranks": ranks, "wall_s": wall_s,
         "cpu_s": cpu_s,
         "rss_mb": rss_kb / 1024,
         "steps": summary["steps"], "requests": summary["requests"],
         "simulated_s": summary["duration_s"], "summary_bytes": raw}
    t = TIMING.search(p.stderr)
    if t:
        r.update(shards=int(t.group(1)), windows=int(t.group(2)), routing_s=float(t.group(3)),
                 shards_s=float(t.group(4)), merging_s=float(t.group(5)),
                 routing_cpu_s=float(t.group(6)), shards_cpu_s=float(t.group(7)),
                 merging_cpu_s=float(t.group(8)))
    # The wall time on idle cores, from CPU seconds: the serial parts (the process's CPU less
    # the windows') plus the windows' critical path (the busiest thread's CPU, window by
    # window). On a busy machine this is what an idle one would take; with one thread it is
    # the CPU time.
    r["idle_s"] = cpu_s
    if t and t.group(9) and threads >= 2 and ranks == 1:
        r["critical_cpu_s"] = float(t.group(9))
        r["idle_s"] = cpu_s - r["shards_cpu_s"] + r["critical_cpu_s"]
    if t and t.group(9) and ranks > 1:
        # The ranks' CPU counts MPI's busy waiting at each window's exchange, so the serial
        # parts are rank 0's own (its CPU outside the windows and the exchange: none of the
        # exchange's waiting is counted) and the windows' part the critical path over all ranks.
        r["critical_cpu_s"] = float(t.group(9))
        r["idle_s"] = None  # filled from the 1-thread run's serial parts (main)
    return r


def fit(runs):
    """The scaling model (docs/performance.md#parallel-engine). The 1-thread run splits the work
    in CPU seconds (robust to other load on the machine): O (reading the config, the summary:
    the process's CPU less the parts), R (routing), P (the shards' windows, their recording
    included) and M (the merge: the requests held at once, anything recorded in the sequential
    order, folding the shards' parts), over W windows. On p threads, p shards run, one on the
    calling thread, which then merges: T(p) = O + R + M + P / p + W * c * (1 + log2(p)), c the
    cost of one window's imbalance and overhead, fitted on the 2-thread run's time on idle cores
    (idle_s: its CPU seconds with the windows' share replaced by their critical path, so the
    machine's other load does not enter; 0 when that run was no slower than the model without
    it). Speed-ups are against the sequential run's CPU seconds."""
    seq = next((r for r in runs if r["threads"] == 0), None)
    one = next((r for r in runs if r["threads"] == 1 and r["ranks"] == 1 and "shards_s" in r),
               None)
    two = next((r for r in runs if r["threads"] == 2 and r["ranks"] == 1 and "shards_s" in r),
               None)
    if not seq or not one or not two:
        return None
    R, P, M = one["routing_cpu_s"], one["shards_cpu_s"], one["merging_cpu_s"]
    W = one["windows"]
    O = max(0.0, one["cpu_s"] - R - P - M)
    c = max(0.0, (two["idle_s"] - (O + R + M + P / 2)) / (2 * max(1, W)))
    model = {"other_s": O, "routing_s": R, "shards_s": P, "merging_s": M, "windows": W,
             "sync_s_per_window": c, "sequential_cpu_s": seq["cpu_s"],
             "serial_fraction": (O + R + M) / one["cpu_s"]}
    for p in (2, 16, 64):
        ideal = O + R + M + P / p
        t = ideal + W * c * (1 + math.log2(p))
        model[f"predicted_wall_s_{p}"] = t
        model[f"predicted_speedup_{p}"] = seq["cpu_s"] / t
        model[f"predicted_speedup_{p}_no_sync"] = seq["cpu_s"] / ideal
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--servesim", default=os.path.join(ROOT, "build", "servesim"))
    ap.add_argument("--replicas", default="64,256,1000")
    ap.add_argument("--hours", type=float, default=24.0, help="simulated hours (24: a day)")
    ap.add_argument("--start-h", type=float, default=0.0, help="hour of the day to start at")
    ap.add_argument("--rate-per-replica", type=float, default=1.0,
                    help="requests/s per replica, the day's mean")
    ap.add_argument("--threads", default="0,1,2",
                    help="0: the sequential engine; rN: N MPI ranks, rNxT: N ranks of T threads")
    ap.add_argument("--mpirun", default="mpirun", help="the MPI launcher for rN entries")
    ap.add_argument("--workload", choices=("base", "azure"), default="base",
                    help="base: synthetic chat traffic with a daily curve (fleet-base.yaml); "
                         "azure: the Azure 2023 conversation hour repeated (fleet-azure.yaml)")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="run each --threads entry N times, in turns; report each one's median")
    ap.add_argument("--out", default="out/fleet")
    args = ap.parse_args()
    if args.repeat < 1:
        sys.exit("fleet.py: --repeat must be 1 or more")
    results = []
    print(f"{'replicas':>8} {'threads':>7} {'wall_s':>8} {'steps':>12} {'steps/s':>10} "
          f"{'RSS_MB':>7} {'cpu_s':>7} {'speedup':>7} {'effic.':>6} {'windows':>7} {'serial%':>7} "
          f"{'idle_s':>7} {'idle_x':>6} identical")
    for n in [int(x) for x in args.replicas.split(",")]:
        runs = []
        entries = args.threads.split(",")
        tries = {entry: [] for entry in entries}
        for _ in range(args.repeat):
            for entry in entries:
                ranks, t = parse_run(entry)
                tries[entry].append(run_one(args, n, t, os.path.join(args.out, f"r{n}-t{entry}"),
                                            ranks))
        for entry in entries:
            ranks, t = parse_run(entry)
            ordered = sorted(tries[entry], key=lambda x: x["wall_s"])
            r = ordered[(len(ordered) - 1) // 2]  # the median run (the lower of two middle ones)
            r["walls_s"] = [x["wall_s"] for x in tries[entry]]
            if any(x["summary_bytes"] != r["summary_bytes"] for x in tries[entry]):
                sys.exit(f"fleet.py: two runs of --threads {entry} wrote different summaries")
            runs.append(r)
            base = runs[0]
            if r["idle_s"] is None:  # ranks: the 1-thread run's serial parts + the critical path
                one = next((x for x in runs if x["threads"] == 1 and x["ranks"] == 1
                            and "shards_cpu_s" in x), None)
                r["idle_s"] = (one["cpu_s"] - one["shards_cpu_s"] + r["critical_cpu_s"]
                               if one else r["cpu_s"])
            speedup = base["wall_s"] / r["wall_s"]
            eff = speedup / max(1, t * ranks)
            serial = ((r["routing_cpu_s"] + r["merging_cpu_s"]) / r["cpu_s"] * 100
                      if "routing_s" in r and t == 1 and ranks == 1 else float("nan"))
            r.update(speedup=speedup, efficiency=eff, idle_speedup=base["idle_s"] / r["idle_s"],
                     identical=r["summary_bytes"] == base["summary_bytes"])
            label = entry if ranks > 1 else str(t)
            print(f"{n:>8} {label:>7} {r['wall_s']:>8.2f} {r['steps']:>12} "
                  f"{r['steps'] / r['wall_s']:>10.0f} {r['rss_mb']:>7.0f} {r['cpu_s']:>7.2f} "
                  f"{speedup:>7.2f} "
                  f"{eff:>6.2f} {r.get('windows', 0):>7} {serial:>7.1f} {r['idle_s']:>7.2f} "
                  f"{r['idle_speedup']:>6.2f} {r['identical']}",
                  flush=True)
            if args.repeat > 1:
                print(f"{'':>8} {'':>7} walls: {', '.join(f'{w:.2f}' for w in r['walls_s'])}",
                      flush=True)
        model = fit(runs)
        if model:
            print(f"{n:>8} model: O {model['other_s']:.2f} + R {model['routing_s']:.2f} + "
                  f"M {model['merging_s']:.2f} + P {model['shards_s']:.2f} / p + "
                  f"{model['windows']} windows x {model['sync_s_per_window'] * 1e6:.1f} us x "
                  f"(1 + log2(p)) s: 2 cores {model['predicted_speedup_2']:.2f}x "
                  f"({model['predicted_speedup_2_no_sync']:.2f}x without sync), 16 cores "
                  f"{model['predicted_speedup_16']:.2f}x "
                  f"({model['predicted_speedup_16_no_sync']:.2f}x), 64 cores "
                  f"{model['predicted_speedup_64']:.2f}x "
                  f"({model['predicted_speedup_64_no_sync']:.2f}x)", flush=True)
        for r in runs:
            del r["summary_bytes"]
        results.append({"replicas": n, "runs": runs, "model": model})
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "fleet.json"), "w") as f:
        json.dump({"workload": args.workload, "hours": args.hours, "start_h": args.start_h,
                   "repeat": args.repeat,
                   "rate_per_replica": args.rate_per_replica, "results": results}, f, indent=1)
    if not all(r["identical"] for x in results for r in x["runs"]):
        sys.exit("fleet.py: a parallel run's summary.json differs from the sequential run's")


if __name__ == "__main__":
    main()
