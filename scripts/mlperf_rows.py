#!/usr/bin/env python3
"""A published MLPerf serving row, read into the settings servesim runs it with.

The rows are those of shared/data/published/published_dev.csv (its README gives the columns):
one figure of one run, with the run's hardware, parallelism, precision, engine, engine settings,
workload and load condition written out as text. scripts/predict_mlperf.py and
scripts/mlperf_capacity.py simulate each run from these columns alone, so that any row in that
format (the development set, or published figures kept apart from this project) is predicted
the same way, and a row that cannot be is named with the reason.

system(row) returns (settings, None) or (None, why):
  - hardware: "8x H200-SXM-141GB 700 W (...)": the count, and the catalogue entry the chip's
    name stands for (scripts/catalogue.py's match: h200; a100-80gb for A100-SXM4-80GB); its
    memory_gib and its measured tables (`tables:`), if any.
  - model: the checkpoint ("Llama-2-70b-chat-hf") matched the same way against
    configs/models/*.yaml (DeepSeek-R1 is DeepSeek-V3's architecture); its layers, width, KV
    heads, head size, vocabulary and parameters.
  - engine: TensorRT-LLM (trtllm) or vLLM (vllm).
  - parallelism: TPn, PPn, and "x N replicas" or "DPn"; the count must be TP x PP x replicas.
  - precision: "FP8|FP4|BF16|FP16 weights" (FP4 is nvfp4, the NVIDIA format the tables hold) and
    "KV cache FP8|BF16|FP16" (bf16 when the row names none).
  - engine settings, TensorRT-LLM: gpu_batch_size, max_num_tokens (the runtime value where the
    build and runtime differ), chunked context, kvcache_free_gpu_mem_frac (TensorRT-LLM's
    default 0.9 when absent), FP8 context FMHA (attention in fp8). vLLM: its version (from 0.8
    on, V1: chunked prefill, which must not be off; unless the engine names the V0 engine,
    "VLLM_USE_V1=0" or "V0 engine", which 0.8 to 0.10 kept: such a row is V0 and runs as
    V0_VERSION, the last release whose default engine was V0), max_num_seqs,
    max_num_batched_tokens, gpu_memory_utilization (vLLM's default 0.9 when absent).
  - attention data parallelism ("enable_attention_dp", "attention DP" in the engine settings or
    the parallelism; TensorRT-LLM, a mixture of experts, no PP): the TP group's GPUs run as
    data-parallel attention ranks of one GPU each with the experts over all of them
    (step_time data_parallel), each rank with its own batch and token limits and KV pool.
  - all-reduce: timed from the catalogue's link (`allreduce: link`) where tensor parallelism
    runs over PCIe ("no NVLink" in the hardware, "over PCIe" in the parallelism): the PCIe
    tables' all-reduce was measured on a host without peer-to-peer (predict_mlperf.py).

lengths(row, input_mean=None) returns the workload's prompt and output length distributions
(servesim's synthetic keys), from the workload column ("input <=1024 tok (mean ~294)",
"output <=1024 tok", "output capped at 128 tok") and the load condition's implied mean output
("mean output 293.3 tok/sample"): lognormal, capped, with the median solved so that the capped
mean is the stated one; sigma 0.4 for CNN/DailyMail articles, 0.8 otherwise (the OpenOrca
assumption of predict_mlperf.py). An output whose mean reaches its cap is that cap, fixed. A
dataset whose input mean the row does not give: CNN/DailyMail's assumed 800 tokens
(predict_mlperf.py's docstring), or input_mean; any other is refused.

benchmark(row) is the LoadGen benchmark servesim's `capacity --mlperf` takes ("llama2-70b",
"llama3_1-8b-interactive").

  python3 scripts/mlperf_rows.py --self-check    # the parser on made-up rows (no ../shared)
  python3 scripts/mlperf_rows.py ROWS.csv        # what each row is read as, or why not
"""
import csv
import functools
import math
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from catalogue import catalogue, match, model_spec  # noqa: E402  (scripts/catalogue.py)

ENGINES = {"tensorrt-llm": "trtllm", "vllm": "vllm"}
WEIGHTS = {"fp4": "nvfp4", "fp8": "fp8", "bf16": "bf16", "fp16": "fp16"}
KV_BYTES = {"fp8": 1, "bf16": 2, "fp16": 2}
TRTLLM_FREE_FRACTION = 0.9  # TensorRT-LLM's kv_cache_free_gpu_mem_fraction default
VLLM_UTILIZATION = 0.9      # vLLM's gpu_memory_utilization default
V0_VERSION = "0.7.3"  # a vLLM row that runs the V0 engine at 0.8 or later runs as this version
CNN_INPUT_MEAN = 800        # tokens: predict_mlperf.py's assumption (Nallapati et al. 2016)


def number(text, key):
    m = re.search(re.escape(key) + r"\s*=?\s*([0-9.]+)", text)
    return float(m.group(1)) if m else None


def system(row):
    """The run's settings (see the module's docstring): (dict, None) or (None, why)."""
    hw_text, par, prec, es = row["hardware"], row["parallelism"], row["precision"], \
        row["engine_settings"]
    m = re.match(r"\s*(\d+)\s*x\s*([^(]+)", hw_text)
    if not m:
        return None, f"hardware {hw_text!r}: no 'N x chip'"
    count, chip = int(m.group(1)), m.group(2).strip()
    hw, why = match(chip, "hardware")
    if why:
        return None, why
    model, why = match(row["model"], "models")
    if why:
        return None, why
    engine = next((v for k, v in ENGINES.items() if row["engine"].lower().startswith(k)), None)
    if engine is None:
        return None, f"engine {row['engine'].split(' (')[0]!r}: TensorRT-LLM and vLLM are built"
    tp = number(par, "TP") or 1
    pp = number(par, "PP") or 1
    reps = re.search(r"x\s*(\d+)\s*replicas", par) or re.search(r"DP\s*(\d+)", par)
    replicas = int(reps.group(1)) if reps else count // int(tp * pp)
    if tp * pp * replicas != count:
        return None, f"parallelism {par!r} does not use the {count} accelerators"
    w = re.search(r"\b(FP4|FP8|BF16|FP16)\s+weights", prec, re.I)
    if not w:
        return None, f"precision {prec!r}: no FP4, FP8, BF16 or FP16 weights"
    kv = re.search(r"KV cache\s+(FP8|BF16|FP16)", prec, re.I)
    cat = catalogue("hardware")[hw]
    tables = cat.get("tables")
    s = dict(engine=engine, model=model, hw=hw,
             tables=None if tables in (None, "none") else tables, tp=int(tp), pp=int(pp),
             replicas=replicas, weight=WEIGHTS[w.group(1).lower()],
             kv=kv.group(1).lower() if kv else "bf16",
             attn="fp8" if "FP8 context FMHA" in es else "bf16",
             memory_gib=float(cat["memory_gib"]))
    # The KV block: "paged KV 32 tok/block", "block_size 32", or the engine's: 32 for the
    # TensorRT-LLM MLPerf harness's rows, vLLM's 16.
    block = re.search(r"(\d+)\s*tok/block", es) or re.search(r"block_size\s+(\d+)", es)
    s["block"] = int(block.group(1)) if block else (32 if engine == "trtllm" else 16)
    # TensorRT-LLM's attention data parallelism (enable_attention_dp): each of the TP group's
    # GPUs runs attention on its own requests (and holds their KV); the experts are spread over
    # the group. servesim's data_parallel ranks of one GPU each (docs/expert-parallelism.md).
    if re.search(r"enable_attention_dp|attention data parallel|attention DP\d*\b", es + " " + par,
                 re.I) and tp > 1:
        if engine != "trtllm":
            return None, "attention data parallelism is built for TensorRT-LLM rows only"
        if "experts" not in catalogue("models")[model]:
            return None, "attention data parallelism is modelled for a mixture of experts only"
        if pp > 1:
            return None, "attention data parallelism with pipeline parallelism is not modelled"
        s["attn_dp"] = True
    if tp > 1 and ("no NVLink" in hw_text or "over PCIe" in par):
        s["allreduce"] = "link"
    if engine == "trtllm":
        batch = number(es, "gpu_batch_size")
        runtime = re.search(r"(\d+)\s+at runtime", es)
        tokens = int(runtime.group(1)) if runtime else number(es, "max_num_tokens")
        if batch is None or tokens is None:
            return None, "engine settings name no gpu_batch_size or max_num_tokens"
        s.update(batch=int(batch), tokens=int(tokens), chunked="chunked context" in es,
                 frac=number(es, "kvcache_free_gpu_mem_frac") or TRTLLM_FREE_FRACTION)
    else:
        v = re.search(r"vLLM (\d+)\.(\d+)\.(\d+)", row["engine"])
        seqs, batched = number(es, "max_num_seqs"), number(es, "max_num_batched_tokens")
        if not v or seqs is None or batched is None:
            return None, ("a vLLM row names its version (vLLM X.Y.Z), max_num_seqs and "
                          "max_num_batched_tokens")
        version = ".".join(v.groups())
        v1 = (int(v.group(1)), int(v.group(2))) >= (0, 8)
        if v1 and re.search(r"VLLM_USE_V1\s*=\s*0|V0 engine", row["engine"]):
            v1, version = False, V0_VERSION  # 0.8 to 0.10 kept V0 behind VLLM_USE_V1=0
        if v1 and "chunked prefill off" in es:
            return None, "vLLM V1 (0.8 on) without chunked prefill is not modelled"
        s.update(version=version, v1=v1, seqs=int(seqs), batched=int(batched),
                 util=number(es, "gpu_memory_utilization") or VLLM_UTILIZATION)
    return s, None


def trt_capacity(s):
    """TensorRT-LLM's KV pool in tokens: kvcache_free_gpu_mem_frac of the memory left after
    the weights (the embedding and LM head in bf16, the rest in the weight dtype; activations
    not subtracted). With pipeline parallelism a GPU holds its stage's share of the layers (the
    larger share when they do not divide) and one of the two vocabulary tables (the first
    stage's embedding or the last's LM head), and the KV of its stage's layers. With attention
    data parallelism every GPU holds all but the routed experts whole and 1/TP of those, and
    the KV of its own requests: the pool is TP times one GPU's."""
    m = catalogue("models")[s["model"]]
    layers, hidden, vocab = int(m["layers"]), int(m["hidden_size"]), int(m["vocab_size"])
    kvh, hd, params = int(m["kv_heads"]), int(m["head_dim"]), int(m["parameters"])
    emb = 2 * vocab * hidden
    weight_bytes = {"nvfp4": 0.5, "fp8": 1.0, "bf16": 2.0, "fp16": 2.0}[s["weight"]]
    pp = s.get("pp", 1)
    stage_layers = -(-layers // pp)
    tables = emb if pp == 1 else emb // 2
    layer_weights = (params - emb) * weight_bytes
    if pp > 1:
        layer_weights = layer_weights * stage_layers / layers
    ranks = s["tp"] if s.get("attn_dp") else 1  # attention data-parallel ranks of one GPU
    if ranks > 1:  # each GPU: everything but the routed experts whole, 1/ranks of those
        routed = model_spec(s["model"])["expert_parameters"] * weight_bytes
        weights = layer_weights - routed + routed / ranks + tables * 2
    else:
        weights = (layer_weights + tables * 2) / s["tp"]
    free = s["memory_gib"] * 2**30 - weights
    if m.get("attention") == "mla":  # one latent and rotary key a token, whole on every GPU
        per_token = stage_layers * (int(m["mla.kv_lora_rank"]) + int(m["mla.qk_rope_head_dim"])) \
            * KV_BYTES[s["kv"]]
    else:
        per_token = 2 * stage_layers * max(1, kvh // (s["tp"] // ranks)) * hd * KV_BYTES[s["kv"]]
    return ranks * int(s["frac"] * free / per_token)


@functools.lru_cache(maxsize=None)
def capped_lognormal_median(mean, sigma, cap, n=40000):
    """The median whose lognormal(sigma) draws, rounded and clamped to [1, cap], average `mean`."""
    rng = random.Random(7)
    z = [rng.gauss(0, 1) for _ in range(n)]

    def m(median):
        return sum(min(cap, max(1, round(median * math.exp(sigma * x)))) for x in z) / n

    lo, hi = 1.0, float(cap)
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if m(mid) < mean else (lo, mid)
    return round((lo + hi) / 2, 2)


def lengths(row, input_mean=None):
    """(prompt, output) distributions in servesim's synthetic keys, or raises ValueError."""
    wl = row["workload"]
    cnn = "CNN/DailyMail" in wl
    sigma = 0.4 if cnn else 0.8
    i = re.search(r"input\s*<=\s*(\d+)\s*tok(?:\s*\(mean\s*~?\s*([0-9.]+)\))?", wl)
    o = re.search(r"output\s*(?:<=|capped at)\s*(\d+)\s*tok(?:\s*\(mean\s*~?\s*([0-9.]+)\))?", wl)
    if not i or not o:
        raise ValueError(f"workload {wl!r}: no 'input <=N tok' and 'output <=N tok'")
    in_cap, out_cap = int(i.group(1)), int(o.group(1))
    in_mean = float(i.group(2)) if i.group(2) else (input_mean or (CNN_INPUT_MEAN if cnn else None))
    if in_mean is None:
        raise ValueError(f"workload of {wl.split(':')[0]!r}: no mean input length (\"input "
                         f"<={in_cap} tok (mean ~M)\")")
    out_mean = number(row["load_condition"], "mean output") or \
        (float(o.group(2)) if o.group(2) else None)
    if out_mean is None:
        raise ValueError(f"workload {wl!r}: no mean output length")
    pm = capped_lognormal_median(in_mean, sigma, in_cap)
    prompt = f"{{kind: lognormal, median: {pm}, sigma: {sigma}, max: {in_cap}}}"
    if out_mean >= out_cap:
        return prompt, f"{{kind: fixed, value: {out_cap}}}"
    om = capped_lognormal_median(out_mean, 0.8, out_cap)
    return prompt, f"{{kind: lognormal, median: {om}, sigma: 0.8, max: {out_cap}}}"


def input_mean_assumed(row):
    """Whether the row's workload leaves its mean input length to an assumption."""
    return not re.search(r"input\s*<=\s*\d+\s*tok\s*\(mean", row["workload"])


def benchmark(row):
    """The LoadGen benchmark of the row's workload, as `servesim capacity --mlperf` names it."""
    m = re.search(r"MLPerf\s+([A-Za-z0-9.\-]+):", row["workload"])
    if not m:
        raise ValueError(f"workload {row['workload']!r}: no 'MLPerf BENCHMARK:'")
    name = m.group(1).lower().replace(".", "_")
    return name + ("-interactive" if row["scenario"] == "Interactive" else "")


SELF_CHECK_ROWS = [  # made up, in the data set's format
    dict(source_id="x_h100_trt_srv", engine="TensorRT-LLM (a harness)",
         engine_settings="in-flight batching; gpu_batch_size 512; max_num_tokens 1024 at build and "
                         "8192 at runtime; chunked context; FP8 context FMHA",
         model="Llama-3.1-8B-Instruct", precision="FP8 weights; KV cache FP8",
         hardware="4x H100-SXM-80GB (a host; PCIe Gen5; no NVLink)",
         parallelism="TP2 PP1 x 2 replicas", scenario="Interactive",
         workload="MLPerf llama3.1-8b: CNN/DailyMail 13368 samples; input <=2540 tok; output "
                  "capped at 128 tok (mean ~128)",
         load_condition="Server: Poisson arrivals at target_qps=10; achieved 9 completed samples/s"
                        " and 1200 output tok/s (mean output 129.0 tok/sample); VALID"),
    dict(source_id="x_a100_vllm_off", engine="vLLM 0.6.5 (a fork)",
         engine_settings="max_num_seqs 256; max_num_batched_tokens 8192; gpu_memory_utilization "
                         "0.9", model="Llama-2-70b-chat-hf", precision="BF16 weights",
         hardware="8x A100-SXM4-80GB (a host; NVLink)", parallelism="TP4 x DP2",
         scenario="Offline",
         workload="MLPerf llama2-70b: OpenOrca 24576 samples; input <=1024 tok (mean ~294); output "
                  "<=1024 tok (mean ~290)",
         load_condition="Offline: one query of 24576 samples issued at t=0; mean output 291.0 "
                        "tok/sample (tokens/s / samples/s); VALID"),
]


def self_check():
    s, why = system(SELF_CHECK_ROWS[0])
    assert why is None, why
    want = dict(engine="trtllm", model="llama-3.1-8b", hw="h100-sxm", tables="h100_sxm", tp=2,
                replicas=2, weight="fp8", kv="fp8", attn="fp8", allreduce="link", batch=512,
                tokens=8192, chunked=True, frac=0.9)
    for k, v in want.items():
        assert s[k] == v, (k, s[k], v)
    assert benchmark(SELF_CHECK_ROWS[0]) == "llama3_1-8b-interactive"
    p, o = lengths(SELF_CHECK_ROWS[0])
    assert "sigma: 0.4, max: 2540" in p and o == "{kind: fixed, value: 128}", (p, o)
    # 8 x 80 GiB, TP2 fp8: the pool is 0.9 of what the weights leave, 64 KiB a token.
    m = catalogue("models")["llama-3.1-8b"]
    emb = 2 * int(m["vocab_size"]) * int(m["hidden_size"])
    left = s["memory_gib"] * 2**30 - ((int(m["parameters"]) - emb) + 2 * emb) / 2
    assert trt_capacity(s) == int(0.9 * left / (2 * 32 * 4 * 128)), trt_capacity(s)
    # Pipeline parallelism: a GPU holds half the layers, one vocabulary table and its layers' KV.
    s, why = system(dict(SELF_CHECK_ROWS[0], parallelism="TP2 PP2 x 1 replicas"))
    assert why is None and s["pp"] == 2 and s["replicas"] == 1, (s, why)
    left = s["memory_gib"] * 2**30 - ((int(m["parameters"]) - emb) / 2 + emb) / 2
    assert trt_capacity(s) == int(0.9 * left / (2 * 16 * 4 * 128)), trt_capacity(s)
    # Multi-head latent attention (DeepSeek-R1 = deepseek-v3): one 512-wide latent and a 64-wide
    # rotary key a token and layer, whole on every GPU of the group (not 128 heads x 192 x 2).
    s, why = system(dict(SELF_CHECK_ROWS[0], model="DeepSeek-R1", parallelism="TP8 x 1 replicas",
                         precision="FP4 weights; KV cache FP8", hardware="8x B200-SXM-180GB"))
    assert why is None and s["model"] == "deepseek-v3" and s["tp"] == 8, (s, why)
    d = catalogue("models")["deepseek-v3"]
    emb = 2 * int(d["vocab_size"]) * int(d["hidden_size"])
    left = s["memory_gib"] * 2**30 - ((int(d["parameters"]) - emb) * 0.5 + 2 * emb) / 8
    assert trt_capacity(s) == int(0.9 * left / (61 * (512 + 64))), trt_capacity(s)
    # Attention data parallelism (a mixture of experts only): each GPU holds all but the routed
    # experts, an eighth of those, and its own requests' KV; the pool is 8 GPUs' worth.
    dp, why = system(dict(SELF_CHECK_ROWS[0], model="DeepSeek-R1", precision="FP4 weights; KV "
                          "cache FP8", hardware="8x B200-SXM-180GB", parallelism="TP8 x 1 "
                          "replicas (MoE EP8; attention DP8)"))
    assert why is None and dp.get("attn_dp") and dp["tp"] == 8, (dp, why)
    routed = 58 * 256 * 3 * 7168 * 2048 * 0.5
    left = dp["memory_gib"] * 2**30 - (((int(d["parameters"]) - emb) * 0.5 - routed) + routed / 8
                                       + 2 * emb)
    assert trt_capacity(dp) == 8 * int(0.9 * left / (61 * (512 + 64))), trt_capacity(dp)
    s, why = system(dict(SELF_CHECK_ROWS[0], engine_settings=SELF_CHECK_ROWS[0]["engine_settings"]
                         + "; enable_attention_dp"))
    assert s is None and "mixture of experts only" in why, why
    s, why = system(dict(SELF_CHECK_ROWS[1], model="Mixtral-8x7B-Instruct-v0.1",
                         parallelism="TP4 x DP2 (attention DP)"))
    assert s is None and "TensorRT-LLM rows only" in why, why
    s, why = system(SELF_CHECK_ROWS[1])
    assert why is None, why
    want = dict(engine="vllm", model="llama-2-70b", hw="a100-80gb", tp=4, replicas=2,
                weight="bf16", kv="bf16", attn="bf16")
    for k, v in want.items():
        assert s[k] == v, (k, s[k], v)
    assert "allreduce" not in s and benchmark(SELF_CHECK_ROWS[1]) == "llama2-70b"
    p, o = lengths(SELF_CHECK_ROWS[1])
    assert p.endswith("sigma: 0.8, max: 1024}") and "max: 1024" in o and "lognormal" in o
    # vLLM 0.8 to 0.10 with the V0 engine forced: V0 (at V0_VERSION), so no chunked prefill is
    # allowed; the same version without the note is V1 and refused without chunked prefill.
    v0 = dict(SELF_CHECK_ROWS[1], engine="vLLM 0.9.0.2 (a harness; VLLM_USE_V1=0, so the V0 "
              "engine)", engine_settings=SELF_CHECK_ROWS[1]["engine_settings"] +
              "; chunked prefill off")
    s, why = system(v0)
    assert why is None and not s["v1"] and s["version"] == V0_VERSION, (s, why)
    s, why = system(dict(v0, engine="vLLM 0.9.0.2 (a harness)"))
    assert s is None and "without chunked prefill" in why, why
    # What is refused, and why.
    assert match("DeepSeek-R1", "models") == ("deepseek-v3", None)
    assert match("Mixtral-8x7B-Instruct-v0.1", "models") == ("mixtral-8x7b", None)
    assert match("AMD Instinct MI325X 256GB HBM3e", "hardware") == ("mi325x", None)
    # A two-word entry beats its one-word prefix; GB200 is not B200.
    assert match("8x H200-NVL-141GB", "hardware") == ("h200-nvl", None)
    assert match("GB200", "hardware")[0] != "b200"
    bad = [("hardware", "8x Intel Gaudi 3 (a host)", "no hardware catalogue entry"),
           ("model", "Gemma-2-9B", "no models catalogue entry"),
           ("engine", "SGLang 0.4", "TensorRT-LLM and vLLM are built"),
           ("parallelism", "TP4 x DP4", "does not use the 8 accelerators"),
           ("precision", "INT4 weights", "no FP4, FP8, BF16 or FP16 weights")]
    for key, value, says in bad:
        r = dict(SELF_CHECK_ROWS[1], **{key: value})
        s, why = system(r)
        assert s is None and says in why, (key, value, why)
    r = dict(SELF_CHECK_ROWS[1], workload="MLPerf x: a set; input <=100 tok; output <=10 tok")
    try:
        lengths(r)
        raise AssertionError("a workload without a mean input length was accepted")
    except ValueError as e:
        assert "no mean input length" in str(e)
    print("mlperf_rows self-check: passed")


def main():
    if sys.argv[1:] == ["--self-check"]:
        self_check()
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        s, why = system(row)
        print(row["source_id"], row["metric"], why or s)


if __name__ == "__main__":
    main()
