#!/usr/bin/env python3
"""Times the Vidur comparison side by side with Vidur itself on this machine (issue 34).

servesim runs bench/configs/vidur-azure-conv-llama2-7b-a100.yaml (the Azure 2023 conversation
trace, 19,366 requests, one Llama-2-7B replica on an A100 80 GB, vLLM-style scheduling); Vidur
runs the same requests, written for it by this script: `servesim trace gen` applies the config's
workload transform (the 4,096-token context cap), and its trace.csv becomes Vidur's trace-replay
columns (arrived_at, num_prefill_tokens, num_decode_tokens). Each round runs Vidur on the whole
trace, Vidur on its first 10 requests (its start-up: imports, predictor, trace loading) and
servesim --servesim-runs times; the rounds alternate the two, so both see the same machine. It
prints every time, the medians, and Vidur's median over servesim's with and without Vidur's
start-up. Wall times are wait4's around each process.

Vidur is not part of this repository: --vidur is the command line that runs it, with {trace}
(a csv this script writes) and {out} (a folder) in it; docs/performance.md ("Vidur, side by
side") gives the set-up and the flags of the comparison.

  python3 bench/vidur_side_by_side.py --vidur '/path/run_vidur.sh {trace} {out}' \\
      [--servesim build/servesim] [--rounds 3] [--servesim-runs 11] [--work DIR]
"""
import argparse
import csv
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "configs", "vidur-azure-conv-llama2-7b-a100.yaml")
START_UP_REQUESTS = 10


def vidur_trace(servesim, config, work):
    """Writes Vidur's trace-replay csv of the config's workload, and its first requests; returns
    (whole, first) paths and the request count."""
    gen = os.path.join(work, "trace-gen")
    subprocess.run([servesim, "trace", "gen", config, "--out", gen, "--quiet"], check=True)
    with open(os.path.join(gen, "trace.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    paths = []
    for name, part in (("vidur-trace.csv", rows), ("vidur-trace-first.csv",
                                                    rows[:START_UP_REQUESTS])):
        path = os.path.join(work, name)
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["arrived_at", "num_prefill_tokens", "num_decode_tokens"])
            for r in part:
                w.writerow([r["arrival_s"], r["prompt_tokens"], r["output_tokens"]])
        paths.append(path)
    return paths[0], paths[1], len(rows)


def timed(cmd, log):
    """Wall seconds of one process (wait4), its output to `log`; exits if it fails."""
    with open(log, "w") as out:
        start = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        _, status, _ = os.wait4(p.pid, 0)
        wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed (exit {os.waitstatus_to_exitcode(status)}); see {log}")
    return wall


def vidur_cmd(template, trace, out):
    if "{trace}" not in template or "{out}" not in template:
        sys.exit("--vidur: the command must hold {trace} and {out}")
    return [a.replace("{trace}", trace).replace("{out}", out) for a in shlex.split(template)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vidur", required=True, help="Vidur's command, with {trace} and {out}")
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--config", default=CONFIG)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--servesim-runs", type=int, default=11)
    ap.add_argument("--work", help="keep the traces, outputs and logs here")
    a = ap.parse_args()
    if a.rounds < 1 or a.servesim_runs < 1:
        sys.exit("--rounds and --servesim-runs: at least 1")
    work = a.work or tempfile.mkdtemp(prefix="vidur-side.")
    os.makedirs(work, exist_ok=True)
    try:
        whole, first, n = vidur_trace(a.servesim, a.config, work)
        print(f"{n} requests; Vidur's trace {whole}")
        print("| round | Vidur, whole trace (s) | Vidur, first 10 requests (s) | servesim median "
              "of its runs (ms) | load average |")
        print("|---|---:|---:|---:|---|")
        vf, v10, ss = [], [], []
        for r in range(1, a.rounds + 1):
            load = os.getloadavg()[0]
            vf.append(timed(vidur_cmd(a.vidur, whole, os.path.join(work, f"vidur{r}")),
                            os.path.join(work, f"vidur{r}.log")))
            v10.append(timed(vidur_cmd(a.vidur, first, os.path.join(work, f"vidur-first{r}")),
                             os.path.join(work, f"vidur-first{r}.log")))
            runs = [timed([a.servesim, "run", a.config, "--out", os.path.join(work, "servesim"),
                           "--quiet"], os.path.join(work, "servesim.log"))
                    for _ in range(a.servesim_runs)]
            ss.append(statistics.median(runs))
            print(f"| {r} | {vf[-1]:.2f} | {v10[-1]:.2f} | {ss[-1] * 1e3:.1f} | {load:.2f} |")
        mf, m10, ms = statistics.median(vf), statistics.median(v10), statistics.median(ss)
        print()
        print(f"medians: Vidur {mf:.2f} s (start-up {m10:.2f} s), servesim {ms * 1e3:.1f} ms")
        print(f"Vidur / servesim: {mf / ms:,.0f}x; without Vidur's start-up {(mf - m10) / ms:,.0f}x")
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
