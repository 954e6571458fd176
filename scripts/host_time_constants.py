#!/usr/bin/env python3
"""Prints the host-time constants of models/host_time.cpp (issue 21) from their public source.

Vidur's A100 cpu_overheads.csv (microsoft/vidur, data/profiling/a100/cpu_overheads.csv, MIT;
a vLLM-derived engine) gives, per batch size, the median CPU time of one step's scheduling
(`schedule`), input preparation (`prepare_inputs_e2e`), sampling (`sampler_e2e`) and output
processing (`process_model_outputs`). Each is fitted by least squares to per_step_ms +
per_seq_ms x batch. None of the scored runs (the measured vLLM runs, data/published) is read.

    python3 scripts/host_time_constants.py [--data ../shared/data]
"""
import argparse
import csv
import os

import shared_data  # scripts/shared_data.py: the --data folder, or a clear message

PARTS = [("schedule", "schedule"), ("prepare_inputs", "prepare_inputs_e2e"),
         ("sample", "sampler_e2e"), ("process_outputs", "process_model_outputs")]


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - k * mx, k


def constants(data, gpu="a100", model="codellama/CodeLlama-34b-Instruct-hf", tp="2"):
    """{part: (per_step_ms, per_seq_ms)} fitted to Vidur's cpu_overheads.csv, and its rows."""
    path = os.path.join(data, "timings/vidur-early", gpu, "cpu_overheads.csv")
    rows = [r for r in csv.DictReader(open(path))
            if r["model_name"] == model and r["tensor_parallel_degree"] == tp]
    if len(rows) < 2:
        raise SystemExit(f"{path}: fewer than 2 rows for {model} at TP {tp}")
    batch = [float(r["batch_size"]) for r in rows]
    return {name: fit(batch, [float(r[col + "_median"]) for r in rows])
            for name, col in PARTS}, path, batch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--gpu", default="a100", help="a100 (the default constants) or a40")
    ap.add_argument("--model", default="codellama/CodeLlama-34b-Instruct-hf")
    ap.add_argument("--tp", default="2")
    a = ap.parse_args()
    shared_data.require(a.data, __file__)
    parts, path, batch = constants(a.data, a.gpu, a.model, a.tp)
    print(f"{path}: {a.model}, TP {a.tp}, {len(batch)} batch sizes {min(batch):g}-{max(batch):g}")
    print("| part | column (median) | per_step_ms | per_seq_ms | at batch 1 | at batch 64 |")
    print("|---|---|---|---|---|---|")
    total = [0.0, 0.0]
    for name, col in PARTS:
        b, k = parts[name]
        total[0] += b
        total[1] += k
        print(f"| {name} | {col} | {b:.4f} | {k:.5f} | {b + k:.3f} | {b + 64 * k:.3f} |")
    print(f"| total | | {total[0]:.4f} | {total[1]:.5f} | {total[0] + total[1]:.3f} | "
          f"{total[0] + 64 * total[1]:.3f} |")


if __name__ == "__main__":
    main()
