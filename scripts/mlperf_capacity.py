#!/usr/bin/env python3
"""MLPerf Server as a capacity (issue 31, part 5): servesim's highest passing Server rate
(`servesim capacity --mlperf BENCHMARK`: the benchmark's p99 TTFT and TPOT limits, LoadGen's
minimum duration, the run's own (600 s, or the 2,400 s four runs set), and 100-query minimum at
every probed rate) against the published Server rate of each run of the
open development set (shared/data/published/published_dev.csv); then the latencies at equal load
relative to capacity. Prints three markdown tables (docs/validation.md, "MLPerf Server as a
capacity"): the capacities, with the limit the lowest failing probe broke; each capacity error
taken apart, (1 + error) = (1 + Offline error) x servesim's capacity / its Offline, over the
published Server / Offline; the latencies at equal relative load. Nothing is fitted to the
published figures.

Each system is one engine replica simulated with its published settings, read from the row's own
columns and built exactly as scripts/predict_mlperf.py builds it (scripts/mlperf_rows.py;
operator model; lengths, KV pool and scheduler from there), so that --rows FILE takes any csv in
the development set's format; a Server row's Offline partner is the row whose source_id ends in
_off instead. Capacities are per replica times the replicas.

Equal relative load: the published Server rate divided by the published Offline rate is how close
to saturation the submitter ran. The same fraction of servesim's own Offline throughput (every
sample at t = 0, the replica's share of the published query) gives the rate at which servesim's Server
latencies are compared with the published ones, so that a throughput error does not turn into a
queueing error. Those runs last the run's minimum duration too.

usage: scripts/mlperf_capacity.py [--servesim build/servesim] [--data ../shared/data] [--rows CSV]
                                  [--tolerance 0.02] [--requests N] [--only SUBSTRING]
                                  [--engine-presets] [--keep DIR]
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlperf_rows as mr  # noqa: E402  (a published row read into settings)
import predict_mlperf as pm  # noqa: E402  (the scenario builder)
import shared_data  # noqa: E402


def min_duration(row):
    """The run's minimum duration in s (load_condition: "min duration 2400 s"; LoadGen's 600
    when the row names none): four published Server runs set 2,400 s in their user.conf."""
    m = re.search(r"min duration ([0-9]+) s", row["load_condition"])
    return int(m.group(1)) if m else 600


def offline_samples_per_s(off):
    """The published Offline rate in samples/s: the load condition's, or its tokens/s over the
    mean output it implies; None when the row gives neither."""
    m = re.search(r"([0-9.]+) samples/s", off["load_condition"])
    if m:
        return float(m.group(1))
    mean = mr.number(off["load_condition"], "mean output")
    return float(off["value"]) / mean if mean else None


def binding(cap, bench_limits):
    """Which limit the lowest failing probe broke: TTFT, TPOT, and whether its queue grew
    (completions under 95% of the offered rate, the simulated replica past saturation)."""
    f = cap.get("first_failing")
    if not f:
        return "none failed"
    ttft, tpot = bench_limits
    parts = [n for n, v, lim in (("TTFT", f["ttft_p99_ms"], ttft), ("TPOT", f["tpot_p99_ms"], tpot))
             if v > lim]
    text = " and ".join(parts) or "neither"
    if f["requests_per_s"] < 0.95 * f["offered_rate_per_s"]:
        text += " (queue grows)"
    return text


def capacity(a, text, work, name, bench, duration):
    """servesim capacity --mlperf on one replica: (capacity.json, None) or (None, why)."""
    cfg = os.path.join(work, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(text)
    out = os.path.join(work, name)
    r = subprocess.run([a.servesim, "capacity", cfg, "--mlperf", bench, "--out", out,
                        "--min-duration", str(duration),
                        "--tolerance", str(a.tolerance), "--quiet", "--no-progress"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, pm.reason(r.stderr.strip().splitlines()[-1])
    with open(os.path.join(out, "capacity.json")) as f:
        return json.load(f), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--tolerance", type=float, default=0.02,
                    help="the capacity search's relative bracket (servesim capacity --tolerance)")
    ap.add_argument("--requests", type=int,
                    help="Offline samples per simulated replica (default: the published query's "
                         "sample count / replicas, as scripts/predict_mlperf.py)")
    ap.add_argument("--only", default="", help="only the source_ids containing this")
    ap.add_argument("--engine-presets", action="store_true",
                    help="as scripts/predict_mlperf.py --engine-presets")
    ap.add_argument("--keep", help="keep the generated configs and results here")
    ap.add_argument("--rows", help="published rows in the development set's format (default: "
                                   "DATA/published/published_dev.csv)")
    a = ap.parse_args()
    if not a.rows:  # --rows runs on the repository's own catalogue and tables alone
        shared_data.require(a.data, __file__)
    data = os.path.abspath(a.data)
    pm.PRESETS["on"] = a.engine_presets
    pm.OFFLINE["requests"] = a.requests
    rows = pm.read_rows(a.rows or os.path.join(data, "published/published_dev.csv"))
    work = a.keep or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    by_sid = {}
    for r in rows:
        by_sid.setdefault(r["source_id"], {})[r["metric"]] = r
    servers = [sid for sid, m in by_sid.items()
               if next(iter(m.values()))["scenario"] != "Offline" and a.only in sid]

    print("| source_id | benchmark | min duration (s) | published Server rate (QPS) | "
          "servesim capacity (QPS) | error | p99 TTFT / TPOT at the capacity (ms) | "
          "first failing probe broke |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    errors, equal_load, parts = [], [], []
    for sid in servers:
        row = next(iter(by_sid[sid].values()))
        published = mr.number(row["load_condition"], "target_qps=")
        s, lengths, not_built = pm.prepare(row)
        try:
            bench = mr.benchmark(row)
        except ValueError as e:
            not_built = not_built or str(e)
        if not_built:
            print(f"| {sid} | | | {published:g} | n/a | | not built: {not_built} | |")
            continue
        text = pm.scenario(s, row, "operator", 100, lengths)
        duration = min_duration(row)
        cap, why = capacity(a, text, work, sid + "-capacity", bench, duration)
        if cap is None or not cap["capacity"]:
            print(f"| {sid} | {bench} | {duration} | {published:g} | n/a | | "
                  f"{why or 'no rate passes'} | |")
            continue
        c = cap["capacity"]
        qps = c["offered_rate_per_s"] * s["replicas"]
        e = pm.err(qps, published)
        errors.append(abs(e))
        limits = (cap["mlperf"]["ttft_limit_ms"], cap["mlperf"]["tpot_limit_ms"])
        print(f"| {sid} | {bench} | {duration} | {published:g} | {qps:.1f} | {e:+.0f}% | "
              f"{c['ttft_p99_ms']:.0f} / {c['tpot_p99_ms']:.1f} | {binding(cap, limits)} |")
        # Equal load relative to capacity: published Server / published Offline, applied to
        # servesim's own Offline throughput.
        off = by_sid.get(sid.rsplit("_", 1)[0] + "_off", {}).get("tokens_per_s")
        if off is None:
            continue
        off_sps = offline_samples_per_s(off)
        if off_sps is None:
            continue
        fraction = published / off_sps
        s_off, lengths_off, why = pm.prepare(off)
        summ = None
        if s_off:
            summ, why = pm.run(a, pm.scenario(s_off, off, "operator", 0, lengths_off),
                               work, sid + "-offline")
        if summ is None:
            equal_load.append((sid, fraction, None, why))
            continue
        sim_off = summ["finished"] / summ["last_release_s"]  # per replica
        # The capacity error taken apart: (1 + error) = (servesim Offline / published Offline)
        # x (servesim capacity / servesim Offline) / (published Server / published Offline).
        parts.append((sid, off_sps, sim_off * s["replicas"], published, qps))
        rate = fraction * sim_off
        text = pm.scenario(s, row, "operator", 100, lengths)
        n = max(100, math.ceil(rate * duration))  # LoadGen's count over the run's minimum
        summ2, why = pm.run(a, text, work, sid + "-equal-load",
                            [f"workload.synthetic.arrival.rate_per_s={rate}",
                             f"workload.synthetic.requests={n}"])
        equal_load.append((sid, fraction, (rate * s["replicas"], summ2), why))
    print()
    if errors:
        print(f"- capacity: median |error| {statistics.median(errors):.0f}%, mean "
              f"{statistics.mean(errors):.0f}% over {len(errors)} runs")
    print()
    print("Where each capacity error comes from: the Offline throughput (samples/s) and the Server "
          "capacity as a share of it, published and servesim; (1 + capacity error) = (1 + Offline "
          "error) x servesim's share / the published share.")
    print()
    print("| source_id | published Offline (samples/s) | servesim Offline | Offline error | "
          "published Server / Offline | servesim capacity / Offline | capacity error |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for sid, pub_off, sim_off, pub_srv, cap_qps in parts:
        print(f"| {sid} | {pub_off:.1f} | {sim_off:.1f} | {pm.err(sim_off, pub_off):+.0f}% | "
              f"{pub_srv / pub_off:.3f} | {cap_qps / sim_off:.3f} | "
              f"{pm.err(cap_qps, pub_srv):+.0f}% |")
    print()
    print("| source_id | published Server / Offline rate | servesim rate at that fraction (QPS) "
          "| metric | published (ms) | servesim (ms) | error |")
    print("|---|---:|---:|---|---:|---:|---:|")
    lat_errors = []
    for sid, fraction, res, why in equal_load:
        if res is None or res[1] is None:
            print(f"| {sid} | {fraction:.3f} | n/a | | | | {why} |")
            continue
        rate, summ = res
        for metric, r in by_sid[sid].items():
            pub = float(r["value"])
            v = pm.figure(summ, metric, 1)
            e = pm.err(v, pub)
            lat_errors.append(abs(e))
            print(f"| {sid} | {fraction:.3f} | {rate:.1f} | {metric} | {pub:g} | {v:.1f} | "
                  f"{e:+.0f}% |")
    if lat_errors:
        print()
        print(f"- latency at equal relative load: median |error| "
              f"{statistics.median(lat_errors):.0f}% over {len(lat_errors)} figures")


if __name__ == "__main__":
    main()
