#!/usr/bin/env python3
"""Fits servesim's shape-aware roofline (models/shape_roofline.cpp, docs/hardware.md "The
shape-aware roofline") to every AIConfigurator operator table, and validates it leaving one GPU
out. Standard library only.

Each operator class gets a simple parametric efficiency that needs only datasheet figures for a
new chip (memory bandwidth, dense peak per dtype, interconnect: servesim's own hardware catalogue,
configs/hardware/*.yaml). The parameters are fitted by Nelder-Mead on the mean absolute log error
over the shapes a serving step uses (SERVING_* below), over every GPU and both engines.

    python3 scripts/fit_shape_roofline.py --write            # configs/shape-roofline/*.yaml
    python3 scripts/fit_shape_roofline.py --validate         # the leave-one-GPU-out tables

--data defaults to the repository's data/timings/aiconfigurator (the same tables as
../shared/data/timings/aiconfigurator, gzip-compressed; each table is read as X or X.gz).
"""
import argparse
import csv
import gzip
import math
import multiprocessing
import os
import sys

import shared_data  # scripts/shared_data.py: the --data folder, or a clear message

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.join(ROOT, "data", "timings", "aiconfigurator")

# AIConfigurator's GPU folder -> servesim catalogue name (the datasheet the C++ source reads).
GPUS = {
    "a100_sxm": "a100-80gb",
    "b200_sxm": "b200",
    "h100_sxm": "h100-sxm",
    "h200_sxm": "h200",
    "l40s": "l40s",
    "rtx_pro_6000_server": "rtx-pro-6000",
}
# Table dtype name -> (catalogue peak dtype, bytes per element).
DTYPES = {"bfloat16": ("bf16", 2.0), "fp8": ("fp8", 1.0), "fp8_block": ("fp8", 1.0)}
GEMM_DTYPES = ["bfloat16", "fp8", "fp8_block"]
ATTN_VARIANTS = ["bfloat16_kv_bfloat16", "bfloat16_kv_fp8", "fp8_kv_fp8"]
MOE_DTYPES = ["bfloat16", "fp8", "fp8_block"]


# ------------------------------------------------------------------------------ datasheets

def read_catalogue(name):
    """The few figures the roofline needs from configs/hardware/NAME.yaml (flat keys plus the
    peak_tflops map); a tiny reader, enough for the catalogue's own layout."""
    out = {"peak": {}}
    section = None
    with open(os.path.join(ROOT, "configs", "hardware", name + ".yaml")) as f:
        for line in f:
            body = line.split("#", 1)[0].rstrip()
            if not body.strip():
                continue
            key, _, value = body.strip().partition(":")
            value = value.strip()
            if not line.startswith(" "):
                section = key if not value else None
                if key == "memory_bandwidth_gb_per_s":
                    out["bw"] = float(value) * 1e9
                elif key == "interconnect_gb_per_s":
                    # The catalogue states both directions together; a ring step uses one.
                    out["link"] = float(value) / 2 * 1e9
                    out["link_both"] = float(value) * 1e9
            elif section == "peak_tflops":
                out["peak"][key] = float(value) * 1e12
    return out


# ------------------------------------------------------------------------------ tables

def engines(data, gpu):
    return sorted(d for d in os.listdir(os.path.join(data, gpu))
                  if not d.startswith("nccl") and os.path.isdir(os.path.join(data, gpu, d)))


def table(path):
    """`path` or, where only that is there, `path`.gz (the repository's data/ is compressed)."""
    return path if os.path.exists(path) or not os.path.exists(path + ".gz") else path + ".gz"


def has_table(path):
    return os.path.exists(table(path))


def rows(path):
    path = table(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        yield from csv.DictReader(f)


def sat(x, half):
    return x / (x + half)


def pct(xs, q):
    if not xs:
        return float("nan")
    s = sorted(xs)
    i = q * (len(s) - 1)
    lo = int(math.floor(i))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (i - lo)


# Rows that would run faster than the chip's dense peak (e.g. the H200 vLLM context-attention
# table reads 0.04 ms for a 16k-token prefill) are not physical: they are dropped and counted.
DROPPED = {}


def keep(op, gpu, engine, flops, peak, ms):
    if flops / peak * 1e3 <= ms:
        return True
    key = (op, gpu, engine)
    DROPPED[key] = DROPPED.get(key, 0) + 1
    return False


class Sample:
    __slots__ = ("gpu", "engine", "variant", "feat", "ms", "fit", "key")

    def __init__(self, gpu, engine, variant, feat, ms, fit, key):
        self.gpu, self.engine, self.variant, self.feat = gpu, engine, variant, feat
        self.ms, self.fit, self.key = ms, fit, key


# Every op class: how to read its tables into samples (features precomputed from the datasheet),
# its parameters (name, start value), the prediction and the old fixed-efficiency roofline.
class Gemm:
    name = "gemm"
    variants = GEMM_DTYPES
    params = [("compute_efficiency", 0.8), ("m_half_rows", 64.0), ("nk_half", 4e6),
              ("bandwidth_efficiency", 0.8), ("weight_half_bytes", 4e6), ("latency_ms", 0.005)]
    FIT_NK = {1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 51200}
    FIT_M = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}
    serving = "m <= 8192, n and k >= 1024"

    @staticmethod
    def load(data, gpu, engine, hw, out):
        path = os.path.join(data, gpu, engine, "gemm.csv")
        for r in rows(path):
            m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
            if m > 8192 or n < 1024 or k < 1024:
                continue
            fit = m in Gemm.FIT_M and n in Gemm.FIT_NK and k in Gemm.FIT_NK
            for d in GEMM_DTYPES:
                v = r.get("latency_ms_" + d)
                if not v or DTYPES[d][0] not in hw["peak"]:
                    continue
                f = Gemm.feat(m, n, k, d, hw)
                if keep("gemm", gpu, engine, f[3], f[5], float(v)):
                    out.append(Sample(gpu, engine, d, f, float(v), fit, (m, n, k)))

    @staticmethod
    def feat(m, n, k, d, hw):
        peak_name, wb = DTYPES[d]
        weight = n * k * wb
        return (m, n * k, weight, 2.0 * m * n * k, m * k * wb + weight + m * n * 2.0,
                hw["peak"][peak_name], hw["bw"])

    @staticmethod
    def predict(p, f):
        m, nk, weight, flops, nbytes, peak, bw = f
        ec = p[0] * m / (m + p[1]) * nk / (nk + p[2])
        eb = p[3] * weight / (weight + p[4])
        return max(flops / (peak * ec), nbytes / (bw * eb)) * 1e3 + p[5]

    @staticmethod
    def old(f):
        return max(f[3] / (f[5] * 0.6), f[4] / (f[6] * 0.8)) * 1e3


def attn_variant_ok(variant, hw):
    attn = variant.split("_kv_")[0]
    return DTYPES[attn][0] in hw["peak"] and ("fp8" not in variant or "fp8" in hw["peak"])


class ContextAttention:
    name = "context_attention"
    variants = ATTN_VARIANTS
    params = [("compute_efficiency", 0.6), ("isl_half_tokens", 256.0), ("work_half", 1e5),
              ("bandwidth_efficiency", 0.5), ("latency_ms", 0.01)]
    serving = "head_dim 128, 64 <= isl, batch x isl <= 32768"

    @staticmethod
    def load(data, gpu, engine, hw, out):
        for r in rows(os.path.join(data, gpu, engine, "context_attention.csv")):
            b, isl = int(r["batch_size"]), int(r["isl"])
            h, kvh, d = int(r["num_heads"]), int(r["num_key_value_heads"]), int(r["head_dim"])
            if d != 128 or isl < 64 or b * isl > 32768:
                continue
            fit = isl in (64, 256, 1024, 2048, 4096, 8192, 16384)
            for v in ATTN_VARIANTS:
                val = r.get("latency_ms_" + v)
                if not val or not attn_variant_ok(v, hw):
                    continue
                f = ContextAttention.feat(b, isl, h, kvh, d, v, hw)
                if keep("context_attention", gpu, engine, f[2], f[4], float(val)):
                    out.append(Sample(gpu, engine, v, f, float(val), fit, (b, isl, h, kvh, d)))

    @staticmethod
    def feat(b, isl, h, kvh, d, v, hw):
        attn, kv = v.split("_kv_")
        kvb = DTYPES[kv][1]
        flops = 2.0 * b * isl * isl * h * d  # 4 b isl^2 / 2 (causal) h d
        nbytes = b * isl * d * (2 * h * 2.0 + 2 * kvh * kvb)
        return (isl, b * h * isl, flops, nbytes, hw["peak"][DTYPES[attn][0]], hw["bw"])

    @staticmethod
    def predict(p, f):
        isl, work, flops, nbytes, peak, bw = f
        ec = p[0] * isl / (isl + p[1]) * work / (work + p[2])
        return max(flops / (peak * ec), nbytes / (bw * p[3])) * 1e3 + p[4]

    @staticmethod
    def old(f):
        return max(f[2] / (f[4] * 0.6), f[3] / (f[5] * 0.8)) * 1e3


class GenerationAttention:
    name = "generation_attention"
    variants = ["bfloat16_kv_bfloat16", "bfloat16_kv_fp8"]
    params = [("bandwidth_efficiency", 0.9), ("sequence_half_bytes", 1e5), ("latency_ms", 0.01),
              ("per_sequence_ms", 1e-4)]
    serving = "head_dim 128, batch <= 256, 16 <= kv tokens <= 32768"

    @staticmethod
    def load(data, gpu, engine, hw, out):
        for r in rows(os.path.join(data, gpu, engine, "generation_attention.csv")):
            b, kv = int(r["batch_size"]), int(r["step"]) + int(r["isl"])
            h, kvh, d = int(r["num_heads"]), int(r["num_key_value_heads"]), int(r["head_dim"])
            if d != 128 or b > 256 or kv < 16 or kv > 32768:
                continue
            fit = b in (1, 4, 16, 64, 256)
            for v in GenerationAttention.variants:
                val = r.get("latency_ms_" + v)
                if not val or not attn_variant_ok(v, hw):
                    continue
                f = GenerationAttention.feat(b, kv, h, kvh, d, v, hw)
                if keep("generation_attention", gpu, engine, f[2], f[3], float(val)):
                    out.append(Sample(gpu, engine, v, f, float(val), fit, (b, kv, h, kvh, d)))

    @staticmethod
    def feat(b, kv, h, kvh, d, v, hw):
        kvb = DTYPES[v.split("_kv_")[1]][1]
        nbytes = b * kv * 2.0 * kvh * d * kvb + b * h * d * 2 * 2.0
        return (b, nbytes, 4.0 * b * kv * h * d, hw["peak"]["bf16"], hw["bw"])

    @staticmethod
    def predict(p, f):
        b, nbytes, _, _, bw = f
        # e = e_max x sat(bytes per sequence): small reads per sequence are latency-bound.
        return (nbytes + p[1] * b) / (bw * p[0]) * 1e3 + p[2] + p[3] * b

    @staticmethod
    def old(f):
        return max(f[2] / (f[3] * 0.6), f[1] / (f[4] * 0.8)) * 1e3


def moe_terms(tokens, hidden, inter, experts, topk, tp, ep, wb):
    """Expected activated experts on one GPU (balanced routing), the FLOPs and bytes."""
    local = experts / ep
    active = local * (1.0 - (1.0 - topk / experts) ** tokens)
    pairs = tokens * topk / ep  # token-expert pairs routed to this GPU's experts
    width = inter / tp
    flops = 2.0 * pairs * 3 * hidden * width
    nbytes = active * 3 * hidden * width * wb + pairs * hidden * 2 * 2.0
    return active, pairs, flops, nbytes


class Moe:
    name = "moe"
    variants = MOE_DTYPES
    params = [("compute_efficiency", 0.5), ("rows_half", 64.0), ("bandwidth_efficiency", 0.6),
              ("latency_ms", 0.02), ("per_expert_ms", 0.001)]
    serving = "balanced routing, gated experts, tokens <= 8192"

    @staticmethod
    def load(data, gpu, engine, hw, out):
        for r in rows(os.path.join(data, gpu, engine, "moe.csv")):
            d = r["moe_dtype"]
            val = r.get("latency_ms_balanced")
            if d not in MOE_DTYPES or not val or "nongated" in r.get("kernel_source", "") \
                    or DTYPES[d][0] not in hw["peak"]:
                continue
            t = int(r["num_tokens"])
            if t > 8192:
                continue
            shape = tuple(int(r[c]) for c in ("hidden_size", "inter_size", "num_experts", "topk",
                                               "moe_tp_size", "moe_ep_size"))
            f = Moe.feat(t, shape, d, hw)
            if keep("moe", gpu, engine, f[2], f[4], float(val)):
                out.append(Sample(gpu, engine, d, f, float(val), True, (t,) + shape))

    @staticmethod
    def feat(t, shape, d, hw):
        peak_name, wb = DTYPES[d]
        active, pairs, flops, nbytes = moe_terms(t, *shape, wb)
        return (pairs / active, active, flops, nbytes, hw["peak"][peak_name], hw["bw"])

    @staticmethod
    def predict(p, f):
        rows_per_expert, active, flops, nbytes, peak, bw = f
        ec = p[0] * rows_per_expert / (rows_per_expert + p[1])
        return max(flops / (peak * ec), nbytes / (bw * p[2])) * 1e3 + p[3] + p[4] * active

    @staticmethod
    def old(f):
        return max(f[2] / (f[4] * 0.6), f[3] / (f[5] * 0.8)) * 1e3


class AllReduce:
    name = "allreduce"
    variants = ["bfloat16"]
    params = [("bandwidth_efficiency", 0.8), ("half_bytes", 1e6), ("latency_ms", 0.01),
              ("per_gpu_ms", 0.001)]
    serving = "2-8 GPUs, messages <= 64 Mi elements (CUDA-graph path for vLLM)"

    @staticmethod
    def load(data, gpu, engine, hw, out):
        path = os.path.join(data, gpu, engine, "custom_allreduce.csv")
        if not has_table(path):
            return
        for r in rows(path):
            if r.get("kernel_source", "vLLM_custom_graph") != "vLLM_custom_graph":
                continue
            n, el = int(r["num_gpus"]), int(r["message_size"])
            if el > 64 * 2**20:
                continue
            out.append(Sample(gpu, engine, "bfloat16", AllReduce.feat(el, n, hw),
                              float(r["latency_ms"]), True, (n, el)))

    @staticmethod
    def feat(el, n, hw):
        nbytes = 2.0 * el
        return (n, nbytes, 2.0 * (n - 1) / n * nbytes, hw["link"], hw["link_both"])

    @staticmethod
    def predict(p, f):
        n, nbytes, moved, link, _ = f
        return moved / (link * p[0] * sat(nbytes, p[1])) * 1e3 + p[2] + p[3] * (n - 2)

    @staticmethod
    def old(f):
        return f[2] / f[4] * 1e3


# At most about this many samples per variant enter a fit (an even, deterministic thinning).
FIT_CAP = 800

OPS = [Gemm, ContextAttention, GenerationAttention, Moe, AllReduce]


def load_all(data):
    hw = {g: read_catalogue(c) for g, c in GPUS.items()}
    samples = {op.name: [] for op in OPS}
    for g in GPUS:
        for e in engines(data, g):
            for op in OPS:
                if op is not AllReduce and not has_table(os.path.join(data, g, e, "gemm.csv")):
                    continue
                op.load(data, g, e, hw[g], samples[op.name])
    return hw, samples


# ------------------------------------------------------------------------------ fitting

def nelder_mead(f, x0, step=0.7, iters=500, tol=1e-6):
    n = len(x0)
    pts = [list(x0)] + [[x0[j] + (step if j == i else 0.0) for j in range(n)] for i in range(n)]
    vals = [f(x) for x in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < tol:
            break
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        xr = [c[j] + (c[j] - pts[-1][j]) for j in range(n)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [c[j] + 2 * (c[j] - pts[-1][j]) for j in range(n)]
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = [c[j] + 0.5 * (pts[-1][j] - c[j]) for j in range(n)]
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = [pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]) for j in range(n)]
                    vals[i] = f(pts[i])
    i = min(range(n + 1), key=lambda i: vals[i])
    return pts[i], vals[i]


def fit_op(op, samples):
    """Per variant: parameters minimising the mean |log(predicted / measured)|."""
    out = {}
    for v in op.variants:
        pts = [(s.feat, math.log(s.ms)) for s in samples if s.variant == v and s.fit]
        if len(pts) < 3 * len(op.params):
            continue
        pts = pts[::max(1, len(pts) // FIT_CAP)]  # every j-th: keeps the fit a few seconds

        def params(x):
            # Every parameter is positive; an efficiency lies in (0, 1) (nothing beats the
            # datasheet), through a logistic so that the search space has no flat edge.
            return [1 / (1 + math.exp(-a)) if name.endswith("efficiency") else math.exp(a)
                    for (name, _), a in zip(op.params, x)]

        def loss(x):
            p = params(x)
            tot = 0.0
            for f, lm in pts:
                tot += abs(math.log(op.predict(p, f)) - lm)
            return tot / len(pts)

        x = [math.log(v0 / (1 - v0)) if name.endswith("efficiency") else math.log(v0)
             for name, v0 in op.params]
        # Two chains from the start point (a wide and a narrow first simplex), each restarted
        # once from its best point; the better end wins (one chain alone can stall in a corner).
        ends = []
        for steps in ((1.0, 0.2), (0.3, 0.1)):
            y = x
            for step in steps:
                y, val = nelder_mead(loss, y, step=step)
            ends.append((val, y))
        best, y = min(ends)
        out[v] = (params(y), best, len(pts))
    return out


def fit_all(samples, exclude=None):
    fits = {}
    for op in OPS:
        use = [s for s in samples[op.name] if s.gpu != exclude]
        fits[op.name] = fit_op(op, use)
    # Elementwise passes have no table: they take the GEMM's weight-read efficiency (the fitted
    # bf16 bandwidth ceiling) and latency, the closest measured memory-bound kernel.
    g = fits["gemm"]["bfloat16"][0]
    fits["elementwise"] = {"bandwidth_efficiency": g[3], "latency_ms": g[5]}
    return fits


_SAMPLES = None


def _fit_without(gpu):
    return fit_all(_SAMPLES, exclude=gpu)


def write_fit(path, fits, data, tables, command):
    def num(x):
        return f"{x:.6g}"

    lines = [
        "# servesim shape-aware roofline: efficiency curves fitted across AIConfigurator operator",
        "# tables (docs/hardware.md, \"The shape-aware roofline\"; forms in models/shape_roofline.h).",
        f"# Tables: {tables}",
        f"#   under {os.path.relpath(data, ROOT)}, TRT-LLM and vLLM.",
        "# Datasheets: servesim's configs/hardware catalogue (bandwidth, dense peaks, interconnect/2).",
        f"# Produced by: {command}",
        "# Each row: fitted parameters, then '# n=<samples> mae_log=<mean |log error|>'.",
    ]
    for op in OPS:
        lines.append(f"{op.name}:")
        for v, (p, err, n) in fits[op.name].items():
            body = ", ".join(f"{name}: {num(x)}" for (name, _), x in zip(op.params, p))
            lines.append(f"  {v}: {{{body}}}  # n={n} mae_log={err:.3f}")
    e = fits["elementwise"]
    lines.append("elementwise: {bandwidth_efficiency: %s, latency_ms: %s}  # gemm bfloat16's" %
                 (num(e["bandwidth_efficiency"]), num(e["latency_ms"])))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


# ------------------------------------------------------------------------------ validation

def errors(op, fit, samples, gpu):
    """|pred/measured - 1| in % for `gpu`'s samples: (new curves, old fixed roofline)."""
    new, old = [], []
    for s in samples:
        if s.gpu != gpu or s.variant not in fit:
            continue
        new.append(abs(op.predict(fit[s.variant][0], s.feat) / s.ms - 1) * 100)
        old.append(abs(op.old(s.feat) / s.ms - 1) * 100)
    return new, old


# The script's own step composition (mirroring models/operator_source.h's operator calls): per
# layer the QKV, output, gate-up and down GEMMs, one attention call, the elementwise passes and,
# under tensor parallelism, two all-reduces. No embedding or LM head.
MODELS = {
    "llama-3.1-8b tp1": dict(hidden=4096, heads=32, kv=8, hd=128, inter=14336, layers=32, tp=1),
    "llama-2-70b tp8": dict(hidden=8192, heads=64, kv=8, hd=128, inter=28672, layers=80, tp=8),
}
STEPS = {"decode b64 kv2048": ("decode", 64, 2048), "prefill 1x2048": ("prefill", 1, 2048)}


def interp_gemm(table, m, n, k):
    """Bilinear in log n, log k of log time on the measured grid (m must be on the grid)."""
    ns = sorted({key[1] for key in table if key[0] == m})
    ks = sorted({key[2] for key in table if key[0] == m})

    def bracket(xs, x):
        lo = max([a for a in xs if a <= x], default=None)
        hi = min([a for a in xs if a >= x], default=None)
        return lo, hi

    (n0, n1), (k0, k1) = bracket(ns, n), bracket(ks, k)
    if None in (n0, n1, k0, k1):
        return None

    def w(a, b, x):
        return 0.0 if a == b else (math.log(x) - math.log(a)) / (math.log(b) - math.log(a))

    wn, wk = w(n0, n1, n), w(k0, k1, k)
    try:
        c = [[math.log(table[(m, a, b)]) for b in (k0, k1)] for a in (n0, n1)]
    except KeyError:
        return None
    return math.exp((1 - wn) * ((1 - wk) * c[0][0] + wk * c[0][1]) +
                    wn * ((1 - wk) * c[1][0] + wk * c[1][1]))


def step_ops(cfg, kind, batch, ctx):
    tp = cfg["tp"]
    h, kvh, hd, H, inter = cfg["heads"] // tp, max(1, cfg["kv"] // tp), cfg["hd"], cfg["hidden"], \
        cfg["inter"] // tp
    m = batch if kind == "decode" else batch * ctx
    gemms = [(m, (h + 2 * kvh) * hd, H), (m, H, h * hd), (m, 2 * inter, H), (m, H, inter)]
    attn = (kind, batch, ctx, h, kvh, hd)
    elementwise = m * (2 * 2 * H * 2 + 3 * inter * 2 + 2 * 3 * H * 2 + 2 * (h + kvh) * hd * 2)
    allreduce = (m * H, tp) if tp > 1 else None
    return gemms, attn, elementwise, allreduce


def compose(cfg, kind, batch, ctx, gemm, attn, elem, ar):
    gemms, a, eb, red = step_ops(cfg, kind, batch, ctx)
    parts = [gemm(*g) for g in gemms] + [attn(*a), elem(eb)]
    if red:
        parts += [ar(*red)] * 2
    if any(x is None for x in parts):
        return None
    return cfg["layers"] * sum(parts)


def predictor(fits, hw):
    def gemm(m, n, k):
        return Gemm.predict(fits["gemm"]["bfloat16"][0], Gemm.feat(m, n, k, "bfloat16", hw))

    def attn(kind, b, ctx, h, kvh, hd):
        v = "bfloat16_kv_bfloat16"
        if kind == "decode":
            return GenerationAttention.predict(fits["generation_attention"][v][0],
                                               GenerationAttention.feat(b, ctx, h, kvh, hd, v, hw))
        return ContextAttention.predict(fits["context_attention"][v][0],
                                        ContextAttention.feat(b, ctx, h, kvh, hd, v, hw))

    def elem(nbytes):
        e = fits["elementwise"]
        return nbytes / (hw["bw"] * e["bandwidth_efficiency"]) * 1e3 + e["latency_ms"]

    def ar(el, n):
        return AllReduce.predict(fits["allreduce"]["bfloat16"][0], AllReduce.feat(el, n, hw))

    return gemm, attn, elem, ar


def old_predictor(hw, elem):
    def gemm(m, n, k):
        return Gemm.old(Gemm.feat(m, n, k, "bfloat16", hw))

    def attn(kind, b, ctx, h, kvh, hd):
        v = "bfloat16_kv_bfloat16"
        if kind == "decode":
            return GenerationAttention.old(GenerationAttention.feat(b, ctx, h, kvh, hd, v, hw))
        return ContextAttention.old(ContextAttention.feat(b, ctx, h, kvh, hd, v, hw))

    def ar(el, n):
        return AllReduce.old(AllReduce.feat(el, n, hw))

    return gemm, attn, elem, ar


def measured(samples, gpu, engine, elem):
    g = {s.key: s.ms for s in samples["gemm"]
         if s.gpu == gpu and s.engine == engine and s.variant == "bfloat16"}
    v = "bfloat16_kv_bfloat16"
    ctx = {s.key: s.ms for s in samples["context_attention"]
           if s.gpu == gpu and s.engine == engine and s.variant == v}
    gen = {s.key: s.ms for s in samples["generation_attention"]
           if s.gpu == gpu and s.engine == engine and s.variant == v}
    red = {s.key: s.ms for s in samples["allreduce"] if s.gpu == gpu and s.engine == engine}

    def attn(kind, b, c, h, kvh, hd):
        return (gen if kind == "decode" else ctx).get((b, c, h, kvh, hd))

    return (lambda m, n, k: interp_gemm(g, m, n, k)), attn, elem, (lambda el, n: red.get((n, el)))


def validate(data, samples, hw, fits_all, fits_wo):
    print(f"Leave-one-GPU-out, operator level: |predicted / measured - 1| in %, median / p90,")
    print("over both engines' tables. Shapes (serving steps):")
    for op in OPS:
        print(f"  {op.name}: {op.serving}")
    print()
    print("| GPU | op | samples | LOGO median | LOGO p90 | fit-all median | fit-all p90 | "
          "old roofline median | old p90 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for g in GPUS:
        for op in OPS:
            lo, old = errors(op, fits_wo[g][op.name], samples[op.name], g)
            fa, _ = errors(op, fits_all[op.name], samples[op.name], g)
            if not lo:
                print(f"| {g} | {op.name} | 0 | - | - | - | - | - | - |")
                continue
            print(f"| {g} | {op.name} | {len(lo)} | {pct(lo, .5):.0f} | {pct(lo, .9):.0f} | "
                  f"{pct(fa, .5):.0f} | {pct(fa, .9):.0f} | {pct(old, .5):.0f} | "
                  f"{pct(old, .9):.0f} |")
    print()
    print("Whole steps (the script's own composition: per layer QKV/O/gate-up/down bf16 GEMMs +")
    print("one bf16 attention call + elementwise passes + 2 all-reduces under TP; x layers; no LM")
    print("head). Measured = TRT-LLM tables (GEMMs interpolated in log n, log k on the grid;")
    print("elementwise from fit-all on both sides). Error = predicted / measured - 1, in %.")
    print()
    print("| GPU | model | step | measured ms | LOGO | fit-all | old roofline |")
    print("|---|---|---|---:|---:|---:|---:|")
    for g in GPUS:
        eng = [e for e in engines(data, g) if e.startswith("trtllm")][0]
        elem_all = predictor(fits_all, hw[g])[2]
        meas = measured(samples, g, eng, elem_all)
        for mname, cfg in MODELS.items():
            for sname, (kind, b, ctx) in STEPS.items():
                t = compose(cfg, kind, b, ctx, *meas)
                if t is None:
                    print(f"| {g} | {mname} | {sname} | (shape not in table) | | | |")
                    continue
                cols = []
                for pred in (predictor(fits_wo[g], hw[g]), predictor(fits_all, hw[g]),
                             old_predictor(hw[g], elem_all)):
                    cols.append(f"{(compose(cfg, kind, b, ctx, *pred) / t - 1) * 100:+.0f}")
                print(f"| {g} | {mname} | {sname} | {t:.2f} | " + " | ".join(cols) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--out", default=os.path.join(ROOT, "configs", "shape-roofline"))
    ap.add_argument("--write", action="store_true", help="write fit-all and fit-without-<gpu>")
    ap.add_argument("--validate", action="store_true", help="print the leave-one-GPU-out tables")
    a = ap.parse_args()
    shared_data.require(a.data, __file__)
    if not (a.write or a.validate):
        ap.error("give --write and/or --validate")
    hw, samples = load_all(a.data)
    for op in OPS:
        print(f"# {op.name}: {len(samples[op.name])} samples "
              f"({sum(s.fit for s in samples[op.name])} used by the fit)", file=sys.stderr)
    for key, count in sorted(DROPPED.items()):
        print(f"# dropped {count} rows faster than the dense peak: {' '.join(key)}",
              file=sys.stderr)
    # The seven fits are independent: run them side by side (forked workers see the samples).
    global _SAMPLES
    _SAMPLES = samples
    with multiprocessing.get_context("fork").Pool(min(4, os.cpu_count() or 1)) as pool:
        results = pool.map(_fit_without, [None] + list(GPUS))
    fits_all, fits_wo = results[0], dict(zip(GPUS, results[1:]))
    if a.write:
        tables = "gemm, context_attention, generation_attention, moe, custom_allreduce"
        cmd = "python3 scripts/fit_shape_roofline.py --write"
        write_fit(os.path.join(a.out, "fit-all.yaml"), fits_all, a.data,
                  f"{tables} of {', '.join(GPUS)}", cmd)
        for g in GPUS:
            others = ", ".join(x for x in GPUS if x != g)
            write_fit(os.path.join(a.out, f"fit-without-{g}.yaml"), fits_wo[g], a.data,
                      f"{tables} of {others} (not {g})", cmd)
    if a.validate:
        validate(a.data, samples, hw, fits_all, fits_wo)


if __name__ == "__main__":
    main()
