#!/usr/bin/env python3
"""Where the inference-perf runs' TTFT goes (issue 31): servesim's replay of each run taken
apart beside the measured distribution, to tell a per-request constant from queueing.

For each CodeLlama-34B stage of runs/ (the overloaded reasoning run left out): the measured
TTFT at p1, p10, median, p90 and the mean, servesim's at the same points and the difference at
each (a constant difference at every percentile is a fixed time per request; one that grows
toward the tail is queueing); servesim's TTFT split into the wait before the request's first
step (`queue_s`: the API time, the engine loop's wait for the next step) and the rest (its
prefill steps); and both TTFTs in decode steps (the measured one over the real token interval,
2 x the load generator's TPOT; servesim's over its own). For the peer's runs (first 300): mean
and p90, servesim's wait and prefill shares, and its peak requests in flight (against the
max_num_seqs the replay assumes). Same replay as scripts/replay_inference_perf.py, with the
client-side term of api.engine vllm-0.15 (response_overhead_ms, fitted on the differences this
script shows) at 0: what is shown is the engine's TTFT plus the API server's tokenization.

usage: python3 scripts/ttft_decomposition.py [--servesim build/servesim] [--data ../shared/data]
           [--part runs|peer|all] [--set KEY=VALUE ...]
"""
import argparse
import os
import statistics
import tempfile

import replay_inference_perf as rip


def pct(values, p):
    v = sorted(values)
    k = (len(v) - 1) * p / 100
    i = int(k)
    return v[i] + (v[min(i + 1, len(v) - 1)] - v[i]) * (k - i)


def runs(a, base):
    print("| run | stage | TTFT p1 / p10 / median / p90 / mean: measured (ms) | servesim (ms) | "
          "servesim - measured (ms) | servesim: wait / prefill steps (ms) | "
          "TTFT in decode steps: measured / servesim |")
    print("|---|---|---|---|---|---|---|")
    for name, wl, work, setup, extra, measured in rip.run_cases(a.data):
        if wl == "reasoning":
            continue
        output = work["output"]
        rows, _ = rip.replay_run(a, work, dict(setup, response_ms=0.0), os.path.join(base, name),
                                 extra)
        for i, m in enumerate(measured):
            lat = m["successes"]["latency"]
            t = lat["time_to_first_token"]
            meas = [t["p1"] * 1e3, t["p10"] * 1e3, t["median"] * 1e3, t["p90"] * 1e3,
                    t["mean"] * 1e3]
            ok = [r for r in rows if r["stage"] == i and r["done"]]
            ttft = [r["ttft"] * 1e3 for r in ok]
            sim = [pct(ttft, 1), pct(ttft, 10), pct(ttft, 50), pct(ttft, 90),
                   statistics.mean(ttft)]
            wait = statistics.mean(r["queue"] for r in ok) * 1e3
            step_meas = 2 * lat["time_per_output_token"]["mean"] * 1e3
            step_sim = statistics.mean((r["e2e"] - r["ttft"]) / (output - 1) for r in ok) * 1e3
            print(f"| {wl} | {i} | {' / '.join(f'{x:.1f}' for x in meas)} | "
                  f"{' / '.join(f'{x:.1f}' for x in sim)} | "
                  f"{' / '.join(f'{s - x:+.1f}' for s, x in zip(sim, meas))} | "
                  f"{wait:.1f} / {sim[4] - wait:.1f} | "
                  f"{meas[4] / step_meas:.2f} / {sim[4] / step_sim:.2f} |")


def peer(a, base):
    print("| experiment | TTFT mean / p90: measured (ms) | servesim (ms) | "
          "servesim - measured (ms) | servesim: wait / prefill steps (ms) | "
          "servesim's peak in flight |")
    print("|---|---|---|---|---|---|")
    for folder, rows_csv, work, setup, extra in rip.peer_cases(a.data):
        if work is None:
            continue
        recs = {r["metric_name"]: r for r in rows_csv if r["stage_index"] == "-1"}
        if "ttft_mean" not in recs or "ttft_p90" not in recs:  # no summary figures to compare
            continue
        rows, _ = rip.replay_run(a, work, dict(setup, response_ms=0.0), os.path.join(base, folder),
                                 extra, limit=rip.PEER_REPLAY)
        events = sorted([(r["arrival_s"], 1) for r in rows] +
                        [(r["arrival_s"] + r["e2e"], -1) for r in rows])
        peak = level = 0
        for _, d in events:
            level += d
            peak = max(peak, level)
        ok = [r for r in rows[:rip.PEER_REQUESTS] if r["done"]]
        ttft = [r["ttft"] * 1e3 for r in ok]
        sim = [statistics.mean(ttft), pct(ttft, 90)]
        meas = [float(recs["ttft_mean"]["actual"]), float(recs["ttft_p90"]["actual"])]
        wait = statistics.mean(r["queue"] for r in ok) * 1e3
        print(f"| {folder} | {meas[0]:.1f} / {meas[1]:.1f} | {sim[0]:.1f} / {sim[1]:.1f} | "
              f"{sim[0] - meas[0]:+.1f} / {sim[1] - meas[1]:+.1f} | {wait:.1f} / "
              f"{sim[0] - wait:.1f} | {peak} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--part", choices=["runs", "peer", "all"], default="all")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.data, rip.DATASET)):
        print(f"skipped: {os.path.join(a.data, rip.DATASET)} missing")
        return
    with tempfile.TemporaryDirectory(prefix="ttft-") as base:
        if a.part in ("runs", "all"):
            runs(a, base)
        if a.part == "all":
            print()
        if a.part in ("peer", "all"):
            peer(a, base)


if __name__ == "__main__":
    main()
