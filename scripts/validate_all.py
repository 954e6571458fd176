#!/usr/bin/env python3
"""One fidelity table for every validation set: run each validation script, read the headline
figures from what it prints, and write them as the table at the top of docs/validation.md
(between the `fidelity-table` markers), or check that the table there still holds.

Each source is one script of this folder run against ../shared/data (the workshop's store of
real measurements, not part of the repository). When that folder is missing every source is
skipped with a line saying so, and the command exits 0: the figures cannot be checked here.

    python3 scripts/validate_all.py                  # run every source, rewrite the table
    python3 scripts/validate_all.py --check          # run every source, fail if a row moved
    python3 scripts/validate_all.py --short --check  # the quick sources only (CI's ctest)
    python3 scripts/validate_all.py --only replays   # one source, rewrite its rows

A row says whether its figure is a prediction (nothing fitted on the data scored) or a fit
scored on its own data (cross-validated): the two are kept apart, as docs/validation.md does.
The full run takes about 15 minutes on 2 cores (the MLPerf capacity search is most of it); the
short form about 40 seconds.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "validation.md")
BEGIN = "<!-- fidelity-table: begin (scripts/validate_all.py writes this table) -->"
END = "<!-- fidelity-table: end -->"
HEADER = ("| set | case | servesim | peer | basis | source |\n"
          "|---|---|---|---|---|---|")


def md_rows(text, first_header):
    """The rows of the first Markdown table in `text` whose header starts with `first_header`,
    as dicts keyed by the header's cells (a repeated one numbered: "err", "err#2", ...)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("| " + first_header):
            keys = []
            for c in line.strip().strip("|").split("|"):
                c = c.strip()  # a repeated header ("err" after each model) gets "#2", "#3"
                n = sum(k == c or k.startswith(c + "#") for k in keys)
                keys.append(c if n == 0 else f"{c}#{n + 1}")
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                rows.append(dict(zip(keys, cells)))
            return rows
    raise ValueError(f"no table starting with '{first_header}' in the output")


def pct(cell):
    """'-5.2%' -> -5.2; '17.01% (7.53%)' -> 17.01; None when the cell has no percentage."""
    m = re.match(r"\s*([-+]?[0-9.]+)%", cell)
    return float(m.group(1)) if m else None


def spread(errors, unit="figures"):
    """'median |error| 10%, 4 of 6 figures within 15%' for signed percentage errors."""
    a = [abs(e) for e in errors]
    return (f"median |error| {statistics.median(a):.0f}%, {sum(e <= 15 for e in a)} of {len(a)} "
            f"{unit} within 15%")


def triple(values):
    return " / ".join(f"{v:+.1f}" for v in values) + "%"


# ---- parsers: a script's printed output -> rows (case, servesim, peer, basis) -------------------

def parse_replays(text):
    rows = md_rows(text, "run | metric")
    runs = {}
    for r in rows:
        runs.setdefault(r["run"], {})[r["metric"]] = r
    out = []
    closer_op = closer_prof = total = 0
    for run, m in runs.items():
        op = [pct(m[k]["operator model"]) for k in ("TTFT", "TPOT", "E2E")]
        prof = [pct(m[k]["layer profiles"]) for k in ("TTFT", "TPOT", "E2E")]
        peer = [pct(m[k]["peer"]) for k in ("TTFT", "TPOT", "E2E")]
        for a, b, p in zip(op, prof, peer):
            total += 1
            closer_op += abs(a) < abs(p)
            closer_prof += abs(b) < abs(p)
        name = run.split(" (")[0]
        out.append((name, f"operator model {triple(op)}; layer profiles {triple(prof)}",
                    f"LLMServingSim {triple(peer)}",
                    "predicted: mean TTFT / TPOT / E2E error; no fit on these runs"))
    out.append((f"all {len(runs)} runs",
                f"closer than the peer on {closer_op} of {total} means with the operator model, "
                f"{closer_prof} of {total} with the layer profiles", "", "predicted"))
    return out


def parse_steps_operator(text):
    rows = md_rows(text, "case | steps")
    out = []
    for r in rows:
        if not r["case"].endswith(": all"):
            continue
        own = r["own table MAPE (mean error)"]
        logo = r["shape roofline LOGO MAPE (mean error)"]
        old = r["old roofline MAPE (mean error)"]
        out.append((r["case"][:-len(": all")] + f" ({r['steps']} steps)",
                    f"MAPE own table {own}; shape roofline LOGO {logo}; old roofline {old}",
                    "", "predicted: operator tables, no fit on these steps"))
    return out


def parse_argonne(text):
    out = []
    rows = md_rows(text, "GPU | engine")
    for r in rows:
        if r["GPU"] == "all, the 663 batches every model predicts" or r["GPU"].startswith(
                "all, the"):
            out.append((r["GPU"][len("all, "):],
                        f"MAPE own table {r['own table MAPE (mean error)']}; shape roofline "
                        f"LOGO {r['shape roofline LOGO MAPE (mean error)']}; old roofline "
                        f"{r['old roofline MAPE (mean error)']}", "",
                        "predicted: whole-batch latency, no fit on these batches"))
    return out


def parse_fits(text):
    rows = md_rows(text, "timing set | steps")
    fitted = [r for r in rows if r["steps"] != "-"]
    hinge = [pct(r["hinge MAPE (CV)"].split("(")[1]) for r in fitted]
    out = []
    for family in ("Splitwise", "vLLM layers", "Vidur operator tables"):
        vals = [h for r, h in zip(fitted, hinge) if r["timing set"].startswith(family)]
        if vals:
            sets = "timing set" if len(vals) == 1 else "timing sets"
            out.append((f"{family} ({len(vals)} {sets})",
                        f"hinge fit, 5-fold cross-validated MAPE: median "
                        f"{statistics.median(vals):.1f}%, range {min(vals):.1f}-{max(vals):.1f}%",
                        "", "fitted on the same measurements (cross-validated): not a prediction"))
    return out


def parse_mlperf(text):
    rows = md_rows(text, "source_id | metric | published | operator")
    off = [r for r in rows if r["metric"] == "tokens_per_s"]
    errs = [pct(r["err"]) for r in off if pct(r["err"]) is not None]
    out = [(f"Offline tokens/s ({len(off)} systems, {len(errs)} predicted)",
            f"operator model: {spread(errs, 'systems')}", "",
            "predicted: published settings, no fit")]
    for line in text.splitlines():
        m = re.match(r"- (operator model|shape roofline LOGO|old roofline): median \|error\| "
                     r"([0-9.]+)% over ([0-9]+) figures", line)
        if m:
            out.append((f"all figures (Offline, Server latency at the published rate), {m.group(1)}",
                        f"median |error| {m.group(2)}% over {m.group(3)} figures", "",
                        "predicted: published settings, no fit"))
    if len(out) < 2:
        raise ValueError("no 'median |error|' lines in predict_mlperf.py's output")
    return out


def parse_capacity(text):
    rows = md_rows(text, "source_id | benchmark")
    errs = [pct(r["error"]) for r in rows if pct(r["error"]) is not None]
    out = [("Server rate as a capacity (`servesim capacity --mlperf`)", spread(errs, "runs"), "",
            "predicted: the benchmark's own limits, no fit")]
    for line in text.splitlines():
        m = re.match(r"- latency at equal relative load: median \|error\| ([0-9]+)% over "
                     r"([0-9]+) figures", line)
        if m:
            out.append(("latency at equal relative load", f"median |error| {m.group(1)}% over "
                        f"{m.group(2)} figures", "", "predicted"))
    return out


def parse_inference_perf(text):
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"(TTFT|TPOT|ITL|E2E) \(runs/, per stage\): ([0-9]+ of [0-9]+) figures within "
                     r"10%, median \|error\| ([0-9.]+)%", line)
        if m:
            # TTFT and E2E hold the client-side term fitted on runs/: each run is scored with
            # the other runs' fit.
            basis = ("predicted: the client-side time outside the engine fitted on the other "
                     "runs (leave one run out)" if m.group(1) in ("TTFT", "E2E") else
                     "predicted: no fit on these runs")
            out.append((f"CodeLlama-34B TP2, 4 runs, every stage: mean {m.group(1)}",
                        f"{m.group(2)} within 10%, median |error| {m.group(3)}%", "", basis))
        m = re.match(r"([a-z0-9]+)_mean \(peer's runs, first 300\): ([0-9]+ of [0-9]+) figures "
                     r"within 10%, median \|error\| ([0-9.]+)%", line)
        if m and i + 1 < len(lines):
            p = re.match(r"\s+peer \(LLMServingSim\): median \|error\| ([0-9.]+)%; servesim "
                         r"closer on ([0-9]+ of [0-9]+)", lines[i + 1])
            out.append((f"the peer's runs (first 300 requests): mean {m.group(1).upper()}",
                        f"{m.group(2)} within 10%, median |error| {m.group(3)}%; closer than the "
                        f"peer on {p.group(2) if p else '?'}",
                        f"LLMServingSim median |error| {p.group(1)}%" if p else "",
                        "predicted: no fit on these runs (the client-side term is runs/'s)"))
        m = re.match(r"servesim closer than the peer on ([0-9]+ of [0-9]+) figures", line)
        if m:
            out.append(("the peer's runs, every figure", f"closer than the peer on {m.group(1)}",
                        "", "predicted"))
    if not out:
        raise ValueError("no summary lines in replay_inference_perf.py's output")
    return out


def parse_energy(text):
    rows = md_rows(text, "GPU | engine")
    for r in rows:
        if r["GPU"] == "all":
            return [(f"A100 and H100, vLLM and TensorRT-LLM, Llama-2-7B and Llama-3-8B, batches "
                     f"1-64 ({r['batch']})",
                     f"mean power MAPE {r['error']}; output tokens per joule MAPE "
                     f"{r['error#2']}", "",
                     "predicted: catalogue TDP, idle assumed 15% of it, no fit on these runs")]
    raise ValueError("no 'all' row in energy_check.py's output")


SOURCES = [
    # name, set title, command (after python3), parser, short (CI)
    ("replays", "vLLM 0.19 runs replayed (request logs)",
     ["scripts/replay_vllm_operator.py"], parse_replays, True),
    ("fits", "Step level, calibrated fits",
     ["scripts/validate_steps.py"], parse_fits, True),
    ("steps", "Step level, whole steps (layer profiles, Splitwise)",
     ["scripts/validate_operator.py", "--skip-argonne"], parse_steps_operator, True),
    ("argonne", "Whole static batches (Argonne LLM-Inference-Bench)",
     ["scripts/validate_operator.py"], parse_argonne, False),
    ("inference-perf", "inference-perf vLLM 0.15 runs on H100",
     ["scripts/replay_inference_perf.py"], parse_inference_perf, True),
    ("mlperf", "MLPerf development set, Offline and Server figures",
     ["scripts/predict_mlperf.py", "--requests", "1000"], parse_mlperf, False),
    ("mlperf-capacity", "MLPerf development set, Server as a capacity",
     ["scripts/mlperf_capacity.py"], parse_capacity, False),
    ("mlperf-heldout", "MLPerf v5.1 runs held out (data/published, not the development set)",
     ["scripts/predict_mlperf.py", "--rows", "data/published/mlperf_v51_heldout.csv",
      "--requests", "1000"], parse_mlperf, False),
    ("mlperf-heldout-capacity", "MLPerf v5.1 runs held out, Server as a capacity",
     ["scripts/mlperf_capacity.py", "--rows", "data/published/mlperf_v51_heldout.csv"],
     parse_capacity, False),
    ("energy", "GPU power and energy (Argonne LLM-Inference-Bench power runs)",
     ["scripts/energy_check.py"], parse_energy, True),
]


def run_source(src, servesim, data):
    name, title, cmd, parse, _ = src
    script = os.path.join(ROOT, cmd[0])
    if not os.path.exists(script):
        return None, f"{name}: {cmd[0]} is not in this tree"
    full = [sys.executable, script] + cmd[1:] + ["--servesim", servesim, "--data", data]
    p = subprocess.run(full, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"validate_all: {' '.join(cmd)} failed (exit {p.returncode}):\n"
                         f"{p.stderr[-2000:]}")
    rows = parse(p.stdout)
    command = "python3 " + " ".join(cmd)
    return [(title, case, sv, peer, basis, f"`{command}`")
            for case, sv, peer, basis in rows], None


def row_text(row):
    return "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"


def doc_table():
    text = open(DOC, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"validate_all: {DOC} has no fidelity-table markers")
    head, rest = text.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    rows = [line for line in body.strip().splitlines()[2:] if line.startswith("|")]
    return head, rows, tail


def source_of(line):
    m = re.search(r"`python3 ([^`]+)` \|$", line)
    return m.group(1) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servesim", default=os.path.join(ROOT, "build", "servesim"))
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--check", action="store_true", help="fail if a row differs from the doc's")
    ap.add_argument("--short", action="store_true", help="only the quick sources (CI)")
    ap.add_argument("--only", action="append", default=[], help="only this source (repeatable)")
    a = ap.parse_args()
    names = [s[0] for s in SOURCES]
    for o in a.only:
        if o not in names:
            ap.error(f"--only {o}: not a source; the sources are {', '.join(names)}")
    if not os.path.isdir(a.data):
        print(f"validate_all: skipped: {os.path.abspath(a.data)} is missing (the workshop's "
              "measured data, ../shared/data, is not part of the repository); no figure checked")
        return 0
    if not os.path.exists(a.servesim):
        raise SystemExit(f"validate_all: {a.servesim} is missing: build servesim first")
    chosen = [s for s in SOURCES if (not a.only or s[0] in a.only) and (not a.short or s[4])]
    head, old_rows, tail = doc_table()
    new_rows = {}
    for src in chosen:
        rows, why = run_source(src, a.servesim, a.data)
        if rows is None:
            print(f"validate_all: skipped: {why}")
            continue
        new_rows[" ".join(src[2])] = [row_text(r) for r in rows]
    if a.check:
        bad = 0
        for cmd, rows in new_rows.items():
            old = [r for r in old_rows if source_of(r) == cmd]
            if old != rows:
                bad += 1
                print(f"validate_all: the rows of `python3 {cmd}` have moved:")
                for line in old:
                    if line not in rows:
                        print(f"  doc:  {line}")
                for line in rows:
                    if line not in old:
                        print(f"  now:  {line}")
        if bad:
            print("validate_all: rerun `python3 scripts/validate_all.py` and check the new figures "
                  "against the sections below the table")
            return 1
        print(f"validate_all: {sum(len(r) for r in new_rows.values())} rows of "
              f"{len(new_rows)} sources agree with docs/validation.md")
        return 0
    # Rewrite: each source's rows replace its old ones, in SOURCES order.
    out = []
    for src in SOURCES:
        cmd = " ".join(src[2])
        out += new_rows.get(cmd, [r for r in old_rows if source_of(r) == cmd])
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(head + BEGIN + "\n" + HEADER + "\n" + "\n".join(out) + "\n" + END + tail)
    print(f"validate_all: wrote {len(out)} rows to {os.path.relpath(DOC, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
