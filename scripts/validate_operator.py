#!/usr/bin/env python3
"""Step-level check of `step_time.kind: operator` (AIConfigurator's measured operator tables)
against measured whole steps, with nothing fitted: prints `servesim calibrate --check`'s errors.

  1. Llama-3.1-8B TP1 on RTX PRO 6000 (vLLM 0.19 tables) against the steps composed from
     LLMServingSim's vLLM layer profiles of that GPU (decodes at KV up to 8,192, prefill chunks,
     mixed steps: the profile's own grid).
  2. Llama-2-70B TP4 on H100 (vLLM and TRT-LLM tables) against Splitwise's measured prefill and
     decode steps (perf_model.csv).

usage: scripts/validate_operator.py [--servesim build/servesim] [--data ../shared/data]
"""
import argparse
import os
import subprocess
import tempfile

CASES = [
    ("Llama-3.1-8B TP1, RTX PRO 6000, vLLM 0.19 tables vs LLMServingSim layer profiles",
     "llama-3.1-8b", "rtx-pro-6000", 1, "rtx_pro_6000_server", "vllm",
     ["timings/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/tp1",
      "--layers", "32", "--max-kv-per-seq", "8192"]),
    ("Llama-2-70B TP4, H100, vLLM 0.19 tables vs Splitwise", "llama-2-70b", "h100-sxm", 4,
     "h100_sxm", "vllm",
     ["timings/splitwise/perf_model.csv", "--model", "llama2-70b", "--hardware", "h100-80gb",
      "--tp", "4"]),
    ("Llama-2-70B TP4, H100, TRT-LLM 1.3 tables vs Splitwise", "llama-2-70b", "h100-sxm", 4,
     "h100_sxm", "trtllm",
     ["timings/splitwise/perf_model.csv", "--model", "llama2-70b", "--hardware", "h100-80gb",
      "--tp", "4"]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--data", default="../shared/data")
    a = ap.parse_args()
    data = os.path.abspath(a.data)
    with tempfile.TemporaryDirectory() as tmp:
        for title, model, hw, tp, gpu, engine, measured in CASES:
            cfg = os.path.join(tmp, "step_time.yaml")
            with open(cfg, "w") as f:
                f.write(f"kind: operator\nmodel: {model}\nhardware: {hw}\ntensor_parallel: {tp}\n"
                        f"operators: {{source: tables, path: {data}/timings/aiconfigurator, "
                        f"gpu: {gpu}, engine: {engine}}}\n")
            args = [a.servesim, "calibrate", os.path.join(data, measured[0])] + measured[1:]
            r = subprocess.run(args + ["--check", cfg], capture_output=True, text=True)
            print(f"## {title}")
            print(r.stdout.strip() if r.returncode == 0 else "error: " + r.stderr.strip())
            print()


if __name__ == "__main__":
    main()
