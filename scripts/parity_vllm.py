#!/usr/bin/env python3
"""Request-by-request and time-series parity of servesim with measured vLLM 0.19 runs.

Replays each run as scripts/validate_vllm.py does (same options; its replay() builds the
scenario) with `servesim run --steps`, then compares, per run:
  - the error of the mean TTFT, TPOT and E2E, beside the peer simulator's published error
    (validation/summary.txt);
  - the error of the p50, p90 and p99 of TTFT, TPOT and E2E over the requests, beside the peer's
    (validation/summary.txt's Median, P90 and P99 lines);
  - per request, matched by id (`bench-N` is trace row N): the mean, median and p90 of
    |servesim - measured| / measured for TTFT, TPOT and E2E, and Spearman's rank correlation of
    the two for TTFT and E2E (does servesim order the requests as vLLM did?);
  - the engine's state over time: vLLM's stat logger samples running and waiting requests and
    KV usage once a second (vllm/timeseries.csv, `t` seconds after meta.json's started_at);
    servesim's steps.csv gives the state each step planned. At every measured tick, servesim's
    state is that of the last step that started at or before it (clocks aligned on request 0's
    arrival). Reported: the mean absolute difference of running and of waiting requests, and of
    KV usage in percentage points (only where the run recorded KV usage; the RTX PRO 6000 runs
    log 0.0 throughout), and of output tokens a second (vLLM's gen_throughput over the second
    before the tick; servesim's decode tokens of the steps ending in it plus the first tokens
    made in it), which shows where in the run servesim's steps are too fast or too slow.

With --host-overhead-loo each run is replayed with a per-step host overhead (`overhead_ms`)
fitted, leave-one-out, to the mean TPOT of the *other* runs on the same GPU: the engine's time
around the GPU kernels, which the kernel profiles leave out, calibrated without the run scored.

With --host-time both (validate_vllm.py's option) every run is replayed with scheduler.host_time
false and true: the tables above for each, then the error of the means side by side with each
column's mean |error| (--series-dir DIR writes DIR/host_off and DIR/host_on).

usage: scripts/parity_vllm.py --all [--servesim build/servesim] [--series-dir DIR] [...]
       scripts/parity_vllm.py --gpu RTXPRO6000 --model Llama-3.1-8B [...]
Prints one markdown table (one row per run); --series-dir writes DIR/<gpu>_<model>.csv with
both series side by side at the measured ticks. Any validate_vllm.py option applies to every run.
"""
import argparse
import copy
import csv
import datetime
import bisect
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate_vllm as vv  # noqa: E402

# Display names of the collection's runs; a run not named here is shown as "GPU model".
LABELS = {("RTXPRO6000", "Llama-3.1-8B"): "RTX PRO 6000, Llama-3.1-8B, TP1",
          ("RTXPRO6000", "Qwen3-32B"): "RTX PRO 6000, Qwen3-32B, TP2",
          ("RTX4090", "Llama-3.1-8B"): "RTX 4090, Llama-3.1-8B, TP1 (KV-bound)",
          ("RTXPRO6000", "Qwen3-30B-A3B-Instruct-2507"): "RTX PRO 6000, Qwen3-30B-A3B, DP2 x EP2"}


def ranks(values):
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x, y):
    """Pearson's correlation of the ranks."""
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return cov / math.sqrt(vx * vy) if vx > 0 and vy > 0 else float("nan")


def mean_error(measured, simulated):
    m = sum(measured) / len(measured)
    return (sum(simulated) / len(simulated) - m) / m * 100


def check_ids(run):
    """requests.jsonl's request_id must be bench-<row>: servesim numbers requests by row."""
    for i, r in enumerate(run["measured"]):
        rid = str(r.get("request_id", f"bench-{i}"))
        if rid.rsplit("-", 1)[-1] != str(i) or i not in run["sim"]:
            sys.exit(f"{run['trace']}: row {i} has request_id {rid}; cannot match it by id")


def per_request(rows):
    out = {}
    for key in ("ttft", "tpot", "e2e"):
        m = [r["m_" + key] for r in rows if r["m_" + key] is not None]
        s = [r["s_" + key] for r in rows if r["m_" + key] is not None]
        rel = [abs(b - a) / a for a, b in zip(m, s) if a > 0]
        out[key] = dict(median=vv.pct(rel, 50) * 100, p90=vv.pct(rel, 90) * 100,
                        mean=sum(rel) / len(rel) * 100, spearman=spearman(m, s))
    return out


PEER_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "e2e": "Latency"}
PEER_PCTS = {50: "Median", 90: "P90", 99: "P99"}


def percentile_errors(rows, peer):
    """(servesim's, the peer's) error in % of each figure's p50, p90 and p99 over the requests
    (servesim's: both sides by vv.pct; the peer's: as its validation/summary.txt prints it)."""
    out = {}
    for key in ("ttft", "tpot", "e2e"):
        m = [r["m_" + key] for r in rows if r["m_" + key] is not None]
        s = [r["s_" + key] for r in rows if r["m_" + key] is not None]
        for p, name in PEER_PCTS.items():
            out[(key, p)] = ((vv.pct(s, p) - vv.pct(m, p)) / vv.pct(m, p) * 100,
                             peer.get((PEER_NAMES[key], name)))
    return out


def read_steps(path):
    """(start_s, waiting, running, kv %, end_s, decode tokens) of every step, in start order."""
    steps = []
    with open(path) as f:
        for row in csv.DictReader(f):
            cap = float(row["kv_capacity_tokens"])
            start = float(row["start_s"])
            steps.append((start, int(row["waiting"]), int(row["running"]),
                          100.0 * float(row["kv_used_tokens"]) / cap if cap > 0 else 0.0,
                          start + float(row["duration_s"]), int(row["decode_tokens"])))
    return steps


def tokens_between(ends, counts, a, b):
    """Sum of counts[i] over the events ends[i] (sorted) in (a, b]."""
    return sum(counts[bisect.bisect_right(ends, a):bisect.bisect_right(ends, b)])


def time_series(run):
    """Measured and simulated state at each measured tick, and their mean absolute differences."""
    started = datetime.datetime.fromisoformat(
        run["meta_all"]["started_at"].replace("Z", "+00:00")).timestamp()
    offset = float(run["sim"][0]["arrival_s"]) - run["measured"][0]["arrival_time"]
    steps = read_steps(os.path.join(run["out_dir"], "steps.csv"))
    starts = [s[0] for s in steps]
    # Output tokens made in each tick's second: the steps' decode tokens plus first tokens.
    ends = [s[4] for s in steps]
    decodes = [s[5] for s in steps]
    firsts = sorted(float(r["first_token_s"]) for r in run["sim"].values() if r["first_token_s"])
    series = []
    with open(f"{run['run_dir']}/vllm/timeseries.csv") as f:
        for row in csv.DictReader(f):
            t = float(row["t"])
            at = started + t + offset  # the tick on servesim's clock
            lo, hi = 0, len(starts)  # the last step starting at or before `at`
            while lo < hi:
                mid = (lo + hi) // 2
                if starts[mid] <= at:
                    lo = mid + 1
                else:
                    hi = mid
            w, r, kv = (0, 0, 0.0) if lo == 0 else steps[lo - 1][1:4]
            gen = (tokens_between(ends, decodes, at - 1, at)
                   + bisect.bisect_right(firsts, at) - bisect.bisect_right(firsts, at - 1))
            if lo == len(steps):  # after servesim's last step: it has finished everything
                w, r, kv = 0, 0, 0.0
            series.append(dict(t=t, m_running=int(float(row["running"])), s_running=r,
                               m_waiting=int(float(row["waiting"])), s_waiting=w,
                               m_kv=float(row["kv_cache_pct"]), s_kv=kv,
                               m_gen=float(row["gen_throughput"]), s_gen=float(gen)))
    n = len(series)
    mad = {k: sum(abs(p["m_" + k] - p["s_" + k]) for p in series) / n
           for k in ("running", "waiting", "kv", "gen")}
    mean = {k: (sum(p["m_" + k] for p in series) / n, sum(p["s_" + k] for p in series) / n)
            for k in ("running", "waiting", "kv", "gen")}
    kv_recorded = any(p["m_kv"] > 0 for p in series)
    return series, mad, mean, kv_recorded


def write_series(path, series):
    cols = ["t", "m_running", "s_running", "m_waiting", "s_waiting", "m_kv", "s_kv", "m_gen",
            "s_gen"]
    with open(path, "w") as f:
        f.write("t_s,running_vllm,running_servesim,waiting_vllm,waiting_servesim,"
                "kv_pct_vllm,kv_pct_servesim,output_tokens_per_s_vllm,output_tokens_per_s_servesim\n")
        for p in series:
            f.write(",".join(f"{p[c]:g}" if isinstance(p[c], float) else str(p[c])
                             for c in cols) + "\n")


def parity(a, gpu, model, work):
    run = vv.replay(a, gpu, model, work, steps=True)
    check_ids(run)
    rows = vv.latencies(run)
    err, measured = {}, {}
    for key in ("ttft", "tpot", "e2e"):
        pairs = [(r["m_" + key], r["s_" + key]) for r in rows if r["m_" + key] is not None]
        err[key] = mean_error([p[0] for p in pairs], [p[1] for p in pairs])
        measured[key] = sum(p[0] for p in pairs) / len(pairs)
    peer = vv.peer_figures(f"{run['run_dir']}/validation/summary.txt")
    series, mad, mean, kv_recorded = time_series(run)
    if a.series_dir:
        os.makedirs(a.series_dir, exist_ok=True)
        write_series(os.path.join(a.series_dir, f"{gpu}_{model}.csv"), series)
    return dict(err=err, measured=measured, peer={k: peer.get((n, "Mean")) for k, n in
                               (("ttft", "TTFT"), ("tpot", "TPOT"), ("e2e", "Latency"))},
                req=per_request(rows), pcts=percentile_errors(rows, peer), mad=mad, mean=mean, kv_recorded=kv_recorded,
                preempted=run["summary"]["preempted_requests"])


def tpot_error(a, gpu, model, work, overhead_ms):
    """Error of the mean TPOT (%) of one replay with a per-step overhead of overhead_ms."""
    b = copy.copy(a)
    b.overhead_ms = overhead_ms
    rows = vv.latencies(vv.replay(b, gpu, model, work))
    pairs = [(r["m_tpot"], r["s_tpot"]) for r in rows if r["m_tpot"] is not None]
    return mean_error([p[0] for p in pairs], [p[1] for p in pairs])


def host_overhead(a, held_out, work, all_runs):
    """The per-step host overhead (ms, to 0.01) that zeroes the mean TPOT error of the other runs
    on the same GPU (the same host), never looking at the held-out run; None if there are none.
    The error grows with the overhead, so bisect on [0, 5] ms."""
    others = [(g, m) for g, m in all_runs if g == held_out[0] and (g, m) != held_out]
    if not others:
        return None, others

    def mean_err(o):
        return sum(tpot_error(a, g, m, os.path.join(work, f"loo_{g}_{m}"), o)
                   for g, m in others) / len(others)

    lo, hi = 0.0, 5.0
    if mean_err(lo) >= 0:
        return 0.0, others
    while hi - lo > 0.01:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean_err(mid) < 0 else (lo, mid)
    return round((lo + hi) / 2, 2), others


def fmt_pair(ours, peer):
    p = "?" if peer is None else f"{peer:+.1f}"
    closer = peer is not None and abs(round(ours, 1)) < abs(peer)  # as printed
    return f"{'**' if closer else ''}{ours:+.1f}{'**' if closer else ''} / {p}"


def main():
    ap = argparse.ArgumentParser()
    vv.add_options(ap)
    ap.add_argument("--all", action="store_true", help="every run of the collection (serving-runs/vllm-0.19/GPU/MODEL)")
    ap.add_argument("--gpu", default="RTXPRO6000")
    ap.add_argument("--model", default="Llama-3.1-8B")
    ap.add_argument("--series-dir", help="write each run's two time series side by side here")
    ap.add_argument("--host-overhead-loo", action="store_true",
                    help="replay each run with a per-step overhead fitted, leave-one-out, to the "
                         "TPOT of the other runs on the same GPU (none: no overhead)")
    a = ap.parse_args()
    vv.shared_data.require(a.data, __file__)
    all_runs = vv.runs(a.data)  # every run folder of the collection (validate_vllm.runs)
    runs = all_runs if a.all else [(a.gpu, a.model)]
    base = a.keep or tempfile.mkdtemp()
    modes = vv.host_modes(a)
    if modes != [None] and not vv.host_time_applies(a):
        print(f"--host-time: n/a with --scheduler {a.scheduler} (host_time is a key of the "
              f"engine presets); replaying without it", file=sys.stderr)
        modes = [None]
    by_mode = {}
    for mode in modes:
        b = vv.with_host(a, mode)
        if len(modes) > 1:
            b.series_dir = a.series_dir and os.path.join(a.series_dir, f"host_{mode}")
        work = base if len(modes) == 1 else os.path.join(base, f"host_{mode}")
        by_mode[mode] = run_all(b, runs, work, all_runs)
    for mode in modes:
        if len(modes) > 1:
            print(f"Host time {mode} (`scheduler.host_time: {'true' if mode == 'on' else 'false'}`):")
            print()
        print_tables(by_mode[mode])
    if len(modes) > 1:
        print_host_comparison(by_mode, modes)


def run_all(a, runs, base, all_runs):
    """parity() of every run, with the leave-one-out host overhead when asked."""
    results = []
    for gpu, model in runs:
        b = a
        if a.host_overhead_loo:
            o, others = host_overhead(a, (gpu, model), base, all_runs)
            b = copy.copy(a)
            b.overhead_ms = o or 0.0
            print(f"{gpu} / {model}: " + (
                f"overhead_ms {o:.2f}, fitted to " + ", ".join(m for _, m in others)
                if others else "no other run on this GPU: no overhead"), file=sys.stderr)
        results.append((gpu, model, parity(b, gpu, model, os.path.join(base, f"{gpu}_{model}"))))
    return results


def print_host_comparison(by_mode, modes):
    """Error of the mean TTFT, TPOT and E2E of every run, host time off and on side by side."""
    print("Host time off and on, side by side (error of the mean, %):")
    print()
    print("| run | figure | vLLM mean (ms) | " + " | ".join(f"host time {m}" for m in modes)
          + " | peer |")
    print("|---|---|---|" + "---|" * len(modes) + "---|")
    abs_err = {m: [] for m in modes}
    peer_abs = []
    for i, (gpu, model, r0) in enumerate(by_mode[modes[0]]):
        for key in ("ttft", "tpot", "e2e"):
            cells = []
            for m in modes:
                e = by_mode[m][i][2]["err"][key]
                abs_err[m].append(abs(e))
                cells.append(f"{e:+.1f}")
            p = r0["peer"][key]
            if p is not None:
                peer_abs.append(abs(p))
            print(f"| {LABELS.get((gpu, model), f'{gpu} {model}')} | {key.upper()} | "
                  f"{r0['measured'][key]:.1f} | " + " | ".join(cells) + " | "
                  + ("?" if p is None else f"{p:+.1f}") + " |")
    print()
    for m in modes:
        e = abs_err[m]
        print(f"- mean |error| over the {len(e)} figures, host time {m}: {sum(e) / len(e):.1f}%")
    if peer_abs:
        print(f"- mean |error| of the peer simulator over its {len(peer_abs)} figures: "
              f"{sum(peer_abs) / len(peer_abs):.1f}%")


def print_tables(results):
    print("| run | TTFT mean error % (servesim / peer) | TPOT | E2E | per-request TTFT error "
          "median, p90 (Spearman) | per-request E2E error median, p90 (Spearman) | running: "
          "mean vLLM, servesim (mean abs. diff.) | waiting | KV use %: mean vLLM, servesim "
          "(mean abs. diff., points) | output tokens/s: mean vLLM, servesim (mean abs. diff.) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for gpu, model, r in results:
        req, mad, mean = r["req"], r["mad"], r["mean"]
        kv = (f"{mean['kv'][0]:.1f}, {mean['kv'][1]:.1f} ({mad['kv']:.1f})" if r["kv_recorded"]
              else f"not recorded; servesim {mean['kv'][1]:.1f}")
        print(f"| {LABELS.get((gpu, model), f'{gpu} {model}')} | "
              + " | ".join(fmt_pair(r["err"][k], r["peer"][k]) for k in ("ttft", "tpot", "e2e"))
              + f" | {req['ttft']['median']:.1f}%, {req['ttft']['p90']:.1f}% "
                f"({req['ttft']['spearman']:.3f}) | {req['e2e']['median']:.1f}%, "
                f"{req['e2e']['p90']:.1f}% ({req['e2e']['spearman']:.3f}) | "
                f"{mean['running'][0]:.1f}, {mean['running'][1]:.1f} ({mad['running']:.1f}) | "
                f"{mean['waiting'][0]:.1f}, {mean['waiting'][1]:.1f} ({mad['waiting']:.1f}) | "
                f"{kv} | {mean['gen'][0]:.0f}, {mean['gen'][1]:.0f} ({mad['gen']:.0f}) |")
    print()
    print("Bold: servesim's error of the mean is smaller than the peer's. Preempted by servesim: "
          + ", ".join(f"{LABELS.get((g, m), g + ' ' + m).split(',')[0]} {model_short(m)} "
                      f"{r['preempted']}" for g, m, r in results) + ".")
    print()
    print("| run | figure | mean | p50 | p90 | p99 (error %, servesim / peer) | per request: mean "
          "abs. error % (median, p90) |")
    print("|---|---|---|---|---|---|---|")
    for gpu, model, r in results:
        for key in ("ttft", "tpot", "e2e"):
            q = r["req"][key]
            print(f"| {LABELS.get((gpu, model), f'{gpu} {model}')} | {key.upper()} | "
                  + fmt_pair(r["err"][key], r["peer"][key]) + " | "
                  + " | ".join(fmt_pair(*r["pcts"][(key, p)]) for p in PEER_PCTS)
                  + f" | {q['mean']:.1f} ({q['median']:.1f}, {q['p90']:.1f}) |")
    print()
    print("Bold: servesim's error is smaller than the peer's. The peer's per-request outputs are "
          "not in the data (only validation/summary.txt), so its per-request errors are unknown.")


def model_short(model):
    return model.split("-Instruct")[0]


if __name__ == "__main__":
    main()
