#!/usr/bin/env python3
"""Record every shipped scenario's answers, for the golden test of tests/cli/cli_test.cpp.

Runs `servesim run` on each scenario config under configs/ (the folders of catalogue entries,
step-time data and sweep specs are skipped, as the test skips them), flattens each
summary.json to its figures and writes them to tests/data/golden/configs.json. The test runs
the same configs in process and requires the same figures: every key, every string and boolean
exactly, every number to 1e-9 relative. A change that moves any shipped example's answer
therefore fails the suite until this script is rerun, and the diff of configs.json shows which
figures moved and by how much.

Lists are kept element by element (`replicas[0].busy_share`, `slo.targets[1]`). What is left
out, in this script and in the test alike: the `config` echo of the input, `servesim_version`,
and every `definition` text. Besides the summary, the table `servesim run` prints is kept whole
under the key `(stdout)`, with the output folder written as OUT. Every config is recorded: the
data they read is in the repository's data/ (docs/data.md).

  python3 scripts/golden.py                      # uses build/servesim
  python3 scripts/golden.py --servesim PATH      # another binary
  python3 scripts/golden.py --check              # compare instead of writing; exit 1 on a change
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_SCENARIOS = {"models", "hardware", "shape-roofline", "step_times", "sweeps"}
GOLDEN = os.path.join(ROOT, "tests", "data", "golden", "configs.json")
REL_TOL = 1e-9


def scenario_configs():
    configs = os.path.join(ROOT, "configs")
    out = []
    for dirpath, dirnames, filenames in os.walk(configs):
        rel = os.path.relpath(dirpath, configs)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d not in NOT_SCENARIOS]
        for f in filenames:
            if f.endswith(".yaml"):
                out.append(os.path.relpath(os.path.join(dirpath, f), configs))
    return sorted(out)


def flatten(x, prefix, out):
    """The figures of a summary: leaves of nested maps, keyed by their dotted path."""
    for k, v in x.items():
        if prefix == "" and k in ("config", "servesim_version"):
            continue
        if k == "definition":
            continue
        path = f"{prefix}.{k}" if prefix else k
        leaf(v, path, out)
    return out


def leaf(v, path, out):
    if isinstance(v, dict):
        flatten(v, path, out)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            leaf(x, f"{path}[{i}]", out)
    else:
        out[path] = v


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return a == b and type(a) is type(b)
    if a is None or b is None:
        return a is b
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b)) + 1e-300


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--servesim", default=os.path.join(ROOT, "build", "servesim"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    golden = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rel in scenario_configs():
            path = os.path.join(ROOT, "configs", rel)
            out = os.path.join(tmp, rel.replace("/", "-")[: -len(".yaml")])
            r = subprocess.run([args.servesim, "run", path, "--out", out, "--no-progress"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{rel}: servesim exited {r.returncode}\n{r.stderr}")
            with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
                golden[rel] = flatten(json.load(f), "", {})
            golden[rel]["(stdout)"] = r.stdout.replace(out, "OUT")
    if args.check:
        with open(GOLDEN, encoding="utf-8") as f:
            old = json.load(f)
        changed = 0
        for rel in sorted(set(old) | set(golden)):
            a, b = old.get(rel, {}), golden.get(rel, {})
            for k in sorted(set(a) | set(b)):
                if k not in a or k not in b or not same(a[k], b[k]):
                    print(f"{rel}: {k}: {a.get(k, '(absent)')} -> {b.get(k, '(absent)')}")
                    changed += 1
        print(f"{changed} figures changed over {len(golden)} configs")
        return 1 if changed else 0
    os.makedirs(os.path.dirname(GOLDEN), exist_ok=True)
    with open(GOLDEN, "w", encoding="utf-8") as f:
        json.dump(golden, f, indent=1, sort_keys=True)
        f.write("\n")
    n = sum(len(v) for v in golden.values())
    print(f"wrote {os.path.relpath(GOLDEN, ROOT)}: {len(golden)} configs, {n} figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
