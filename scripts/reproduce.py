#!/usr/bin/env python3
"""Run every reproduction kit (configs/reproductions/*.yaml) and print, for each published
figure, the published value, servesim's and the error (docs/reproductions.md).

Each config names its figures in comment lines of the form
    # figure: LABEL | PUBLISHED | SUMMARY_KEY | SCALE
where SUMMARY_KEY is a dotted path into summary.json (ttft_s.p50,
benchmark.figures.duration_s.value) and SCALE multiplies servesim's value into the published
unit (1000 for seconds to milliseconds). Error = simulated / published - 1.

usage: scripts/reproduce.py [--servesim build/servesim] [--only SUBSTRING] [--markdown]
                            [--set KEY=VALUE ...]
Needs python3, a built servesim and ../shared/data beside the repository (the configs' paths).
"""
import argparse
import glob
import json
import os
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servesim", default=os.path.join(ROOT, "build/servesim"))
    ap.add_argument("--only", default="", help="run only the configs whose name contains this")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="passed on to servesim run as --set (repeatable), for experiments")
    a = ap.parse_args()
    configs = sorted(glob.glob(os.path.join(ROOT, "configs/reproductions/*.yaml")))
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
