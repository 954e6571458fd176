#!/usr/bin/env python3
"""servesim's energy (docs/metrics.md#energy) against measured GPU power: Argonne
LLM-Inference-Bench's power runs (Fig. 16 a-b, power_results.csv: one A100 or H100 running
Llama-2-7B or Llama-3-8B under vLLM or TensorRT-LLM, static batches of 1 to 64 prompts of 1,024
tokens each generating 1,024, with the GPU's mean power over the run). Each row is run as
validate_operator.py runs Argonne's batches (the GPU's own AIConfigurator tables, a static batch)
and the catalogue's power figures; nothing is fitted to these rows.

Printed per row: the measured and predicted mean power (W), output tokens per joule (measured:
batch x 1,024 / latency / power) and the errors, then the mean absolute errors. Power is the
check of the power model alone; tokens per joule also carries the step-time model's error.

usage: scripts/energy_check.py [--servesim build/servesim] [--data ../shared/data]
"""
import argparse
import csv
import os
import tempfile

import shared_data  # scripts/shared_data.py: the --data folder, or a clear message
import validate_operator  # its static batch run, the one Argonne's batches use

# (Argonne's hardware column, catalogue name, AIConfigurator table folder, extra operator keys).
# Argonne's A100s are the 40 GB SXM part: the a100_sxm tables (80 GB) moved to its datasheet.
HW = {"Nvidia A100 GPU": ("a100-40gb", "a100_sxm", ", scale_to_hardware: true"),
      "Nvidia H100 GPU": ("h100-sxm", "h100_sxm", "")}
MODELS = {"meta-llama/Llama-2-7b-hf": "llama-2-7b", "meta-llama/Meta-Llama-3-8B": "llama-3.1-8b"}
ENGINES = {"vLLM": "vllm", "TensorRT-LLM": "trtllm"}


def run(a, tmp, data, hw, model, engine, batch, length):
    name, gpu, extra = HW[hw]
    step_time = (f"kind: operator\nmodel: {model}\nhardware: {name}\nweight_dtype: bf16\n"
                 f"operators: {{source: tables, path: {data}/timings/aiconfigurator, gpu: {gpu}, "
                 f"engine: {engine}{extra}}}\n")
    s = validate_operator.static_batch_summary(a, tmp, step_time, batch, length)
    return None if s is None else s["energy"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--data", default="../shared/data")
    a = ap.parse_args()
    shared_data.require(a.data, __file__)
    data = os.path.abspath(a.data)
    path = os.path.join(data, "timings/argonne-llm-inference-bench/Fig_16_a_b/power_results.csv")
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if r["Hardware"] in HW and r["Model"] in MODELS
                and r["Framework"] in ENGINES and r["Num of Hardware"] == "1"]
    print("| GPU | engine | model | batch | measured W | servesim W | error | measured tokens/J "
          "| servesim tokens/J | error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    errs_w, errs_t = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in rows:
            batch, length = int(r["Batch Size"]), int(r["Input Output Length"])
            watts = float(r["avg_power"]) / 1e3  # milliwatts in the file
            tpj = batch * length / float(r["Latency"]) / watts
            e = run(a, tmp, data, r["Hardware"], MODELS[r["Model"]], ENGINES[r["Framework"]],
                    batch, length)
            if e is None:
                print(f"| {r['Hardware']} | {r['Framework']} | {r['Model']} | {batch} | "
                      f"{watts:.0f} | refused | | {tpj:.2f} | | |")
                continue
            ew = e["mean_power_w"] / watts - 1
            et = e["output_tokens_per_joule"] / tpj - 1
            errs_w.append(ew)
            errs_t.append(et)
            print(f"| {r['Hardware']} | {r['Framework']} | {r['Model']} | {batch} | {watts:.0f} | "
                  f"{e['mean_power_w']:.0f} | {ew:+.1%} | {tpj:.2f} | "
                  f"{e['output_tokens_per_joule']:.2f} | {et:+.1%} |")
    n = max(1, len(errs_w))
    print(f"| all | | | {len(errs_w)} runs | | | {sum(abs(x) for x in errs_w) / n:.1%} "
          f"({sum(errs_w) / n:+.1%}) | | | {sum(abs(x) for x in errs_t) / n:.1%} "
          f"({sum(errs_t) / n:+.1%}) |")


if __name__ == "__main__":
    main()
