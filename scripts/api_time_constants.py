#!/usr/bin/env python3
"""Prints the vLLM 0.19 defaults of the `api` section (sim/api_latency.cpp, issue 31) from the
measured runs' arrival-to-queued times.

Each request of serving-runs/vllm-0.19/*/vllm/requests.jsonl records the client's send time
(`arrival_time`, the Unix clock) and the engine's `queued_ts` (the monotonic clock, when the
engine core added the request to its scheduler). Their difference is the API server's time
(HTTP, tokenization, the hand-over to the engine core) plus a constant: the two clocks' offset,
which is the same for runs on one machine since its boot. The three RTX PRO 6000 runs share one
offset (their per-run minima agree within 2 ms); the smallest difference of the 900 requests is
taken as a delay of 0, so every delay printed is a lower bound.

The difference also holds the wait for the engine core's next loop iteration (the engine adds
new requests between steps), which servesim simulates itself: a request that reaches the
engine mid-step waits for the step's end. So the API server's own time is the lower envelope
of the delays: per bin of prompt length, the smallest delay (the request that met an idle loop),
and a least-squares line through the bins' minima gives request_overhead_ms (its value at 0
tokens) and tokenize_ms_per_1k_tokens (its slope). Only arrival-to-queued times are read: no
TTFT, the figure scripts/validate_vllm.py scores, enters the fit. The RTX 4090 run (another
machine, its own offset) is printed as a check on the slope, not fitted.

    python3 scripts/api_time_constants.py [--data ../shared/data] [--bin-tokens 500]

api.engine vllm-0.15 takes these front-end values and adds the client-side time outside the
engine (response_overhead_ms), which needs a replay to measure: scripts/replay_inference_perf.py
--part runs prints it from the inference-perf runs' client-side TTFT.
"""
import argparse
import glob
import json
import os

import shared_data  # scripts/shared_data.py: the --data folder, or a clear message


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - k * mx, k


def delays(paths):
    """[(prompt tokens, delay ms)] over the runs, the smallest difference taken as 0."""
    rows = []
    for p in paths:
        for line in open(p):
            if line.strip():
                r = json.loads(line)
                rows.append((r["input_toks"], r["queued_ts"] - r["arrival_time"]))
    low = min(d for _, d in rows)
    return [(p, (d - low) * 1e3) for p, d in rows]


def envelope(rows, bin_tokens, min_count):
    """[(bin centre tokens, smallest delay ms, count)] for bins with at least min_count rows."""
    bins = {}
    for p, d in rows:
        bins.setdefault(p // bin_tokens, []).append(d)
    return [((b + 0.5) * bin_tokens, min(ds), len(ds))
            for b, ds in sorted(bins.items()) if len(ds) >= min_count]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--bin-tokens", type=int, default=500)
    ap.add_argument("--min-count", type=int, default=10, help="bins with fewer rows are left out")
    a = ap.parse_args()
    shared_data.require(a.data, __file__)
    root = os.path.join(a.data, "serving-runs/vllm-0.19")
    for i, (gpu, role) in enumerate((("RTXPRO6000", "fitted"), ("RTX4090", "check, not fitted"))):
        if i:
            print()
        paths = sorted(glob.glob(f"{root}/{gpu}/*/vllm/requests.jsonl"))
        rows = delays(paths)
        env = envelope(rows, a.bin_tokens, a.min_count)
        ds = sorted(d for _, d in rows)
        print(f"{gpu} ({role}): {len(paths)} runs, {len(rows)} requests; arrival-to-queued above "
              f"the smallest: median {ds[len(ds) // 2]:.2f} ms, p90 {ds[int(0.9 * len(ds))]:.2f} ms")
        print("| prompt tokens (bin centre) | requests | smallest delay (ms) |")
        print("|---|---|---|")
        for c, m, n in env:
            print(f"| {c:.0f} | {n} | {m:.2f} |")
        if len(env) >= 2:
            b, k = fit([c for c, _, _ in env], [m for _, m, _ in env])
            print(f"line through the minima: {b:.3f} ms + {k * 1e3:.3f} ms per 1k prompt tokens")
            if role == "fitted":
                print(f"api.engine vllm-0.19: request_overhead_ms {max(b, 0.0):.2f} (the line at 0 "
                      f"tokens, not below 0), tokenize_ms_per_1k_tokens {k * 1e3:.2f}")


if __name__ == "__main__":
    main()
