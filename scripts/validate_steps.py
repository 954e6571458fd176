#!/usr/bin/env python3
"""Step-level validation: fit every real timing set with `servesim calibrate` and print the
in-sample and 5-fold cross-validated errors of each model form as a Markdown table.

usage: scripts/validate_steps.py [--servesim build/servesim] [--data ../shared/data]
"""
import argparse
import glob
import os
import re
import subprocess

import shared_data  # scripts/shared_data.py: the --data folder, or a clear message

LAYERS = {"Llama-3.1-8B": 32, "Qwen3-32B": 64, "Llama-3.1-70B": 80,
          "Qwen3-30B-A3B-Instruct-2507": 48}
# Vidur's early A100 tables hold one shape (n_embd 8192, 64 heads, 8 KV heads, MLP 22016, TP 2):
# CodeLlama-34B's, whose CPU overheads they hold too; it has 48 layers.
VIDUR_EARLY_LAYERS = {"a100": 48}


def calibrate(servesim, args):
    r = subprocess.run([servesim, "calibrate"] + args, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[0]
    rows = {}
    for line in r.stdout.splitlines():
        m = re.match(r"(linear|hinge|table)\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%", line)
        if m:
            rows[m.group(1)] = [float(x) for x in m.groups()[1:]]
    n = re.match(r"read (\d+)", r.stdout).group(1)
    return (n, rows), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--data", default="../shared/data")
    a = ap.parse_args()
    shared_data.require(a.data, __file__)
    sets = []
    perf = f"{a.data}/timings/splitwise/perf_model.csv"
    groups = subprocess.run([a.servesim, "calibrate", perf], capture_output=True, text=True).stderr
    for m in re.finditer(r"--source-model (\S+) --source-hardware (\S+) --source-tp (\d+)", groups):
        sets.append((f"Splitwise {m.group(1)} {m.group(2)} TP{m.group(3)}",
                     [perf, "--source-model", m.group(1), "--source-hardware", m.group(2), "--source-tp", m.group(3)]))
    for d in sorted(glob.glob(f"{a.data}/timings/llmservingsim/perf/*/*/*/bf16/tp*")):
        parts = d.split("/")
        gpu, model, tp = parts[-5], parts[-3], parts[-1]
        args = [d]
        if model in LAYERS:
            args += ["--layers", str(LAYERS[model])]
        sets.append((f"vLLM layers {gpu} {model} {tp.upper()}", args))
    for d in sorted(glob.glob(f"{a.data}/timings/vidur-early/*/")):
        gpu = os.path.basename(d.rstrip("/"))
        if os.path.exists(os.path.join(d, "mlp.csv")) and gpu in VIDUR_EARLY_LAYERS:
            sets.append((f"Vidur operator tables {gpu.upper()} CodeLlama-34B TP2",
                         [d.rstrip("/"), "--input-format", "vidur", "--layers", str(VIDUR_EARLY_LAYERS[gpu])]))
    # Vidur's newer releases ship mlp.csv only: the importer says what is missing.
    for d in sorted(glob.glob(f"{a.data}/timings/vidur/compute/*/*/*")):
        parts = d.split("/")
        sets.append((f"Vidur operator tables {parts[-3].upper()} {parts[-1]}", [d, "--input-format", "vidur"]))
    print("| timing set | steps | linear MAPE (CV) | hinge MAPE (CV) | table MAPE (CV) | best max APE (CV) |")
    print("|---|---|---|---|---|---|")
    for name, args in sets:
        res, err = calibrate(a.servesim, args)
        if res is None:
            print(f"| {name} | - | not fitted: {err.replace('|', '/')} | | | |")
            continue
        n, rows = res
        cells = []
        for form in ("linear", "hinge", "table"):
            r = rows.get(form)
            cells.append("-" if r is None else f"{r[0]:.1f}% ({r[2]:.1f}%)")
        best = min(rows.values(), key=lambda r: r[2])
        print(f"| {name} | {n} | {' | '.join(cells)} | {best[3]:.1f}% |")


if __name__ == "__main__":
    main()
