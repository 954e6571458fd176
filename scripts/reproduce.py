#!/usr/bin/env python3
"""Run every reproduction kit (configs/reproductions/*.yaml) and print, for each published
figure, the published value, servesim's and the error (docs/reproductions.md).

Each config names its figures in comment lines of the form
    # figure: LABEL | PUBLISHED | SUMMARY_KEY | SCALE
where SUMMARY_KEY is a dotted path into summary.json (ttft_s.p50,
benchmark.figures.duration_s.value) and SCALE multiplies servesim's value into the published
unit (1000 for seconds to milliseconds). Error = simulated / published - 1.

With --host-time off|on|both every config is run with scheduler.host_time set to false or true
through servesim's --set (both: twice, the two side by side, each with its mean |error|); a
config whose scheduler is not an engine preset (vllm, sglang, trtllm) has no host_time key and
is reported as n/a, as is one whose engine refuses the default host time (TensorRT-LLM before
1.0). Without the flag the configs run as written.

usage: scripts/reproduce.py [--servesim build/servesim] [--only SUBSTRING] [--markdown]
                            [--set KEY=VALUE ...] [--host-time off|on|both]
Needs python3 and a built servesim (the configs read the repository's data/, docs/data.md).
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def figures(path):
    """The (label, published, key, scale) lines of one config."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.startswith("# figure:"):
                continue
            parts = [p.strip() for p in line[len("# figure:"):].split("|")]
            if len(parts) != 4:
                sys.exit(f"{path}:{n}: a figure line needs LABEL | PUBLISHED | KEY | SCALE")
            out.append((parts[0], float(parts[1]), parts[2], float(parts[3])))
    if not out:
        sys.exit(f"{path}: no '# figure:' line")
    return out


def lookup(summary, key):
    v = summary
    for part in key.split("."):
        v = v[part]
    return float(v)


HOST_KINDS = ("vllm", "sglang", "trtllm")  # the scheduler kinds that read host_time


def scheduler_kind(path):
    """The config's top-level scheduler.kind, or None (no scheduler section, or not a map)."""
    try:
        import yaml
    except ImportError:  # a flow or block `kind:` right under `scheduler:`
        text = open(path).read()
        m = (re.search(r"^scheduler:\s*\{[^}]*\bkind:\s*([A-Za-z_]+)", text, re.M)
             or re.search(r"^scheduler:\s*\n(?:[ \t]+.*\n)*?[ \t]+kind:\s*([A-Za-z_]+)", text,
                          re.M))
        return m.group(1) if m else None
    with open(path) as f:
        doc = yaml.safe_load(f)
    sched = doc.get("scheduler") if isinstance(doc, dict) else None
    return sched.get("kind") if isinstance(sched, dict) else None


def reason(error):
    """servesim's error line without its prefix and file position, shortened."""
    text = re.sub(r"^servesim: error: ", "", error.strip())
    text = re.sub(r" at \S+?(:\d+:\d+| \(from --set [^)]*\)): ", ": ", text)
    return text if len(text) <= 120 else text[:117] + "..."


def simulate(a, cfg, extra):
    """summary.json of `servesim run cfg` with a.set and `extra` as --set, or (None, error)."""
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([a.servesim, "run", cfg, "--out", out, "--quiet",
                            "--no-requests-csv"]
                           + [x for kv in a.set + extra for x in ("--set", kv)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None, r.stderr.strip()
        with open(os.path.join(out, "summary.json")) as f:
            return json.load(f), None


def host_time_table(a, configs):
    """--host-time: every figure with host_time off and on (or one of them), side by side."""
    modes = ["off", "on"] if a.host_time == "both" else [a.host_time]
    rows = []  # (config, label, published, {mode: simulated or None}, note)
    for cfg in configs:
        name = os.path.basename(cfg)
        kind = scheduler_kind(cfg)
        sims, notes = {}, []
        for mode in modes:
            if kind not in HOST_KINDS:
                sims[mode] = None
                if not notes:
                    notes.append(f"n/a: scheduler {kind or '(none)'} has no host_time")
                continue
            summary, error = simulate(a, cfg, [f"scheduler.host_time="
                                               f"{'true' if mode == 'on' else 'false'}"])
            if summary is None:
                if mode == "off":
                    sys.exit(f"{name}: servesim run failed:\n{error}")
                sims[mode] = None  # e.g. TensorRT-LLM before 1.0: no default host time
                notes.append(f"n/a ({mode}): " + reason(error.splitlines()[-1]))
                continue
            sims[mode] = summary
        for label, published, key, scale in figures(cfg):
            vals = {m: None if sims[m] is None else lookup(sims[m], key) * scale for m in modes}
            rows.append((name, label, published, vals, "; ".join(notes)))

    def cell(v, pub):
        return ("n/a", "") if v is None else (f"{v:.5g}", f"{(v / pub - 1) * 100:+.1f}%")

    print("| config | figure | published | " + " | ".join(
        f"servesim, host time {m} | error" for m in modes) + " | note |")
    print("|---|---|---|" + "---|---|" * len(modes) + "---|")
    for name, label, pub, vals, note in rows:
        print(f"| `{name}` | {label} | {pub:.5g} | "
              + " | ".join(" | ".join(cell(vals[m], pub)) for m in modes) + f" | {note} |")
    print()
    for m in modes:
        e = [abs(v[m] / pub - 1) for _, _, pub, v, _ in rows if v[m] is not None]
        if e:
            print(f"- host time {m}: mean |error| {sum(e) / len(e) * 100:.1f}% over {len(e)} "
                  f"figures")
        else:
            print(f"- host time {m}: no figure (n/a throughout)")
    both = [r for r in rows if all(r[3][m] is not None for m in modes)]
    if len(modes) > 1:
        print(f"- on the {len(both)} figures both predict: "
              + ", ".join(f"host time {m} {sum(abs(r[3][m] / r[2] - 1) for r in both) / max(1, len(both)) * 100:.1f}%"
                          for m in modes))
    print(f"- n/a: {len(rows) - len(both)} of {len(rows)} figures (the note says why)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servesim", default=os.path.join(ROOT, "build/servesim"))
    ap.add_argument("--only", default="", help="run only the configs whose name contains this")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="passed on to servesim run as --set (repeatable), for experiments")
    ap.add_argument("--host-time", choices=["off", "on", "both"],
                    help="run every config with scheduler.host_time false (off), true (on) or "
                         "both, side by side; n/a where the scheduler has no host_time")
    a = ap.parse_args()
    configs = sorted(glob.glob(os.path.join(ROOT, "configs/reproductions/*.yaml")))
    if a.host_time:
        host_time_table(a, [c for c in configs if a.only in os.path.basename(c)])
        return
    rows = []
    for cfg in configs:
        name = os.path.basename(cfg)
        if a.only not in name:
            continue
        with tempfile.TemporaryDirectory() as out:
            r = subprocess.run([a.servesim, "run", cfg, "--out", out, "--quiet",
                                "--no-requests-csv"] + [x for kv in a.set for x in ("--set", kv)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{name}: servesim run failed:\n{r.stderr}")
            with open(os.path.join(out, "summary.json")) as f:
                summary = json.load(f)
        for label, published, key, scale in figures(cfg):
            simulated = lookup(summary, key) * scale
            rows.append((name, label, published, simulated, simulated / published - 1))
    if a.markdown:
        print("| config | figure | published | servesim | error |")
        print("|---|---|---|---|---|")
        for name, label, pub, sim, err in rows:
            print(f"| `{name}` | {label} | {pub:.5g} | {sim:.5g} | {err * 100:+.1f}% |")
    else:
        width = max(len(r[1]) for r in rows) if rows else 10
        print(f"{'figure':<{width}}  {'published':>12}  {'servesim':>12}  {'error':>8}")
        for name, label, pub, sim, err in rows:
            print(f"{label:<{width}}  {pub:>12.4g}  {sim:>12.4g}  {err * 100:>+7.1f}%")
    if rows:
        mean_abs = sum(abs(r[4]) for r in rows) / len(rows)
        print(f"\n{len(rows)} figures from {len({r[0] for r in rows})} configs; "
              f"mean |error| {mean_abs * 100:.1f}%")


if __name__ == "__main__":
    main()
