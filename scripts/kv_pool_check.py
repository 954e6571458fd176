#!/usr/bin/env python3
"""servesim's default KV pool (`kv.memory` from the catalogue names, reserved_gib 0) against the
pool the engine itself allocated, for every measured serving run in the shared data; prints a
markdown table (docs/validation.md, "Engine memory defaults against the engines' own KV pools").

A run records its pool when its meta.json has kv_cache.num_gpu_blocks (vLLM's "GPU KV cache
size" as blocks of block_size tokens). For each such run servesim is run on one request with
  kv.memory: {model, hardware, tensor_parallel, weight_dtype: bf16, kv_dtype: bf16,
              utilization: <the run's gpu_memory_utilization>}
and again with accelerator_gib set to the total the device reported to the engine
(meta.json hardware.device_total_memory_bytes, CUDA's total rather than nvidia-smi's). The
reserve the engine's pool implies is what the pool leaves of memory x utilization - weights.
Runs that do not record their pool are listed with what they do record. Nothing is fitted.

usage: scripts/kv_pool_check.py [--servesim build/servesim] [--data ../shared/data]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import shared_data  # scripts/shared_data.py: the --data folder, or a clear message

MODELS = {"meta-llama/Llama-3.1-8B": "llama-3.1-8b", "Qwen/Qwen3-32B": "qwen3-32b",
          "Qwen/Qwen3-30B-A3B-Instruct-2507": "qwen3-30b-a3b",
          "codellama/CodeLlama-34b-Instruct-hf": "codellama-34b"}
HARDWARE = {"RTX4090": "rtx-4090", "RTXPRO6000": "rtx-pro-6000", "H100": "h100-sxm"}


def pool_tokens(servesim, memory):
    """KV capacity servesim derives from a kv.memory flow map (one 1-token request run)."""
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "c.yaml")
        with open(cfg, "w") as f:
            f.write("workload: {synthetic: {requests: 1, arrival: {kind: fixed, rate_per_s: 1},\n"
                    "  prompt_tokens: {kind: fixed, value: 16}, output_tokens: {kind: fixed, "
                    "value: 1}}}\nstep_time: {kind: linear, base_ms: 1}\n"
                    "scheduler: {kind: continuous, max_num_seqs: 1}\n"
                    f"kv: {{policy: paged, block_size: 16, memory: {memory}}}\n")
        out = os.path.join(d, "o")
        subprocess.run([servesim, "run", cfg, "--out", out, "-q"], check=True)
        with open(os.path.join(out, "summary.json")) as f:
            return json.load(f)["kv_capacity_tokens"]


def catalogue_model(here, name):
    """The integer figures of configs/models/NAME.yaml (top-level `key: value` lines)."""
    out = {}
    with open(os.path.join(here, "..", "configs", "models", name + ".yaml")) as f:
        for line in f:
            key, _, value = line.partition(":")
            value = value.split("#")[0].strip()
            if value.isdigit():
                out[key.strip()] = int(value)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servesim", default=os.path.join(here, "..", "build", "servesim"))
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data"))
    a = ap.parse_args()
    shared_data.require(a.data, __file__)
    print("| run | engine's pool (tokens) | servesim default (tokens) | error | with the "
          "device's CUDA total (tokens) | error | reserve the pool implies (GiB) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    runs = sorted(glob.glob(os.path.join(a.data, "serving-runs", "vllm-0.19", "*", "*",
                                         "vllm", "meta.json")))
    for meta_path in runs:
        meta = json.load(open(meta_path))
        gpu = meta_path.split(os.sep)[-4]
        name = f"vLLM {meta['vllm_version']} {gpu} {meta['model'].split('/')[-1]}"
        kw = meta["engine_kwargs"]
        kv = meta.get("kv_cache") or {}
        if not kv.get("num_gpu_blocks"):
            print(f"| {name} TP{kw['tensor_parallel_size']} DP{kw['data_parallel_size']} | not "
                  "recorded | - | - | - | - | - |")
            continue
        tp = kw["tensor_parallel_size"]
        util = kv["gpu_memory_utilization"]
        measured = kv["num_gpu_blocks"] * kv["block_size"]
        base = (f"model: {MODELS[meta['model']]}, tensor_parallel: {tp}, weight_dtype: bf16, "
                f"kv_dtype: bf16, utilization: {util}")
        default = pool_tokens(a.servesim, f"{{hardware: {HARDWARE[gpu]}, {base}}}")
        total = meta["hardware"]["device_total_memory_bytes"]
        cuda = pool_tokens(a.servesim, f"{{accelerator_gib: {total / 2**30!r}, {base}}}")
        # What the engine held besides weights and KV: total x util - weights - its pool.
        m = catalogue_model(here, MODELS[meta["model"]])
        per_token = 2 * m["layers"] * max(1, m["kv_heads"] // tp) * m["head_dim"] * 2
        reserve = (total * util - m["parameters"] * 2 / tp - measured * per_token) / 2**30
        print(f"| {name} TP{tp} | {measured:,} | {default:,} | {default / measured - 1:+.1%} | "
              f"{cuda:,} | {cuda / measured - 1:+.1%} | {reserve:.2f} |")
    ip = os.path.join(a.data, "serving-runs", "inference-perf-h100-vllm-0.15", "runs")
    for run in sorted(glob.glob(os.path.join(ip, "*"))):
        print(f"| inference-perf vLLM 0.15.1 H100 {os.path.basename(run)} | not recorded | - | - "
              "| - | - | - |")


if __name__ == "__main__":
    sys.exit(main())
