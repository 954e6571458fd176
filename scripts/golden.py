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

The per-request and per-step files are pinned too, as figures that say what moved: for every
CSV file the run writes (requests.csv, autoscale.csv, and steps.csv where the run has at most
STEP_ROWS steps: the run is then repeated with --steps, and the test passes --steps for the
configs whose entry holds steps.csv figures), `(FILE) rows` and per column:
  numeric column (every non-blank cell a number): `(FILE) COL sum` and `(FILE) COL wsum`, the
    sum of the values and of (row+1)*value over the data rows (so two swapped rows show);
  text column with at most TEXT_VALUES distinct values: `(FILE) COL=VALUE count` and
    `(FILE) COL=VALUE wsum` (the sum of row+1 over the rows holding it);
  any other text column: `(FILE) COL length sum` and `(FILE) COL length wsum` (in bytes);
  and `(FILE) COL blank`, the number of empty cells, where there are any (a column of blanks
  has no other figure).
tests/cli/cli_test.cpp computes the same figures the same way (csv_figures there).

The sweeps under configs/sweeps/ are pinned the same way in tests/data/golden/sweeps.json: each
is run with `servesim size` and its summary.json (every figure), the table it prints and its
points.csv (as above) are kept, with the repository's root in any path written as ROOT. The
sweeps in SLOW_SWEEPS are left out (each takes seconds; the suite runs the others in about 3 s).

  python3 scripts/golden.py                      # uses build/servesim
  python3 scripts/golden.py --servesim PATH      # another binary
  python3 scripts/golden.py --check              # compare instead of writing; exit 1 on a change
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_SCENARIOS = {"models", "hardware", "shape-roofline", "step_times", "sweeps"}
GOLDEN = os.path.join(ROOT, "tests", "data", "golden", "configs.json")
SWEEP_GOLDEN = os.path.join(ROOT, "tests", "data", "golden", "sweeps.json")
# Sweeps too slow to run in the suite (seconds each: many points over a long trace); the
# test skips the same names.
SLOW_SWEEPS = {"sizing-azure-conv-accelerators.yaml", "sweep-kv-offload.yaml"}
REL_TOL = 1e-9
STEP_ROWS = 30000    # a config with more steps than this keeps no steps.csv figures
TEXT_VALUES = 16     # a text column with more distinct values keeps only their lengths
NUMBER = re.compile(r"-?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?")


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


def csv_rows(text):
    """The rows of a CSV file as servesim writes it: comma-separated cells, a cell in double
    quotes may hold commas ("" inside it is one quote)."""
    rows = []
    for line in text.split("\n"):
        if line == "":
            continue
        if '"' not in line:
            rows.append(line.split(","))
            continue
        cells, cell, quoted, i = [], "", False, 0
        while i < len(line):
            c = line[i]
            if quoted:
                if c == '"' and line[i + 1:i + 2] == '"':
                    cell += '"'
                    i += 1
                elif c == '"':
                    quoted = False
                else:
                    cell += c
            elif c == '"':
                quoted = True
            elif c == ",":
                cells.append(cell)
                cell = ""
            else:
                cell += c
            i += 1
        cells.append(cell)
        rows.append(cells)
    return rows


def csv_figures(name, text, out):
    """The figures of one CSV file (see the module's text), added to `out`."""
    rows = csv_rows(text)
    header, data = rows[0], rows[1:]
    out[f"({name}) rows"] = len(data)
    for j, col in enumerate(header):
        cells = [r[j] if j < len(r) else "" for r in data]
        blank = sum(1 for c in cells if c == "")
        key = f"({name}) {col}"
        if blank:
            out[f"{key} blank"] = blank
        if blank == len(cells):
            continue
        if all(c == "" or NUMBER.fullmatch(c) for c in cells):
            total = weighted = 0.0
            for i, c in enumerate(cells):
                if c != "":
                    v = float(c)
                    total += v
                    weighted += (i + 1) * v
            out[f"{key} sum"] = total
            out[f"{key} wsum"] = weighted
            continue
        values = {}
        for i, c in enumerate(cells):
            if c != "":
                n, w = values.get(c, (0, 0))
                values[c] = (n + 1, w + i + 1)
        if len(values) <= TEXT_VALUES:
            for v, (n, w) in values.items():
                out[f"{key}={v} count"] = n
                out[f"{key}={v} wsum"] = w
        else:
            lengths = [len(c.encode("utf-8")) for c in cells]
            out[f"{key} length sum"] = sum(lengths)
            out[f"{key} length wsum"] = sum((i + 1) * n for i, n in enumerate(lengths))


def run(servesim, path, out):
    """Run one config into `out`; its figures: summary, table printed, CSV files written. The
    run writes steps.csv unless that has more than STEP_ROWS rows (it is then run again)."""
    for steps in (True, False):
        folder = out + ("-steps" if steps else "")
        args = [servesim, "run", path, "--out", folder, "--no-progress"]
        r = subprocess.run(args + (["--steps"] if steps else []), capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{path}: servesim exited {r.returncode}\n{r.stderr}")
        if steps:
            with open(os.path.join(folder, "steps.csv"), "rb") as f:
                if sum(1 for _ in f) - 1 > STEP_ROWS:
                    continue
        break
    return folder_figures(folder, r.stdout.replace(folder, "OUT"))


def folder_figures(folder, stdout, root_as=None):
    """The figures of what a command wrote to `folder`: summary.json's leaves, the table it
    printed (`stdout`) and every CSV file's figures; with `root_as`, the repository's root in
    the summary's paths is written as that word."""
    with open(os.path.join(folder, "summary.json"), encoding="utf-8") as f:
        text = f.read()
    figures = flatten(json.loads(text.replace(ROOT, root_as) if root_as else text), "", {})
    figures["(stdout)"] = stdout
    for name in sorted(os.listdir(folder)):
        if name.endswith(".csv"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                csv_figures(name, f.read(), figures)
    return figures


def sweep_configs():
    folder = os.path.join(ROOT, "configs", "sweeps")
    return sorted(f for f in os.listdir(folder) if f.endswith(".yaml") and f not in SLOW_SWEEPS)


def run_sweep(servesim, path, folder):
    """Run one sweep into `folder`; its figures: summary, table printed, points.csv."""
    r = subprocess.run([servesim, "size", path, "--out", folder, "--no-progress"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{path}: servesim size exited {r.returncode}\n{r.stderr}")
    return folder_figures(folder, r.stdout.replace(folder, "OUT").replace(ROOT, "ROOT"), "ROOT")


def compare(old, new, what):
    changed = 0
    for rel in sorted(set(old) | set(new)):
        a, b = old.get(rel, {}), new.get(rel, {})
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b or not same(a[k], b[k]):
                print(f"{rel}: {k}: {a.get(k, '(absent)')} -> {b.get(k, '(absent)')}")
                changed += 1
    print(f"{changed} figures changed over {len(new)} {what}")
    return changed


def write(path, golden, what):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(golden, f, indent=1, sort_keys=True)
        f.write("\n")
    n = sum(len(v) for v in golden.values())
    print(f"wrote {os.path.relpath(path, ROOT)}: {len(golden)} {what}, {n} figures")


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
    golden, sweeps = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for rel in scenario_configs():
            path = os.path.join(ROOT, "configs", rel)
            out = os.path.join(tmp, rel.replace("/", "-")[: -len(".yaml")])
            golden[rel] = run(args.servesim, path, out)
        for name in sweep_configs():
            path = os.path.join(ROOT, "configs", "sweeps", name)
            sweeps["sweeps/" + name] = run_sweep(args.servesim, path,
                                                 os.path.join(tmp, "sweep-" + name[:-5]))
    if args.check:
        with open(GOLDEN, encoding="utf-8") as f:
            old = json.load(f)
        old_sweeps = {}
        if os.path.exists(SWEEP_GOLDEN):
            with open(SWEEP_GOLDEN, encoding="utf-8") as f:
                old_sweeps = json.load(f)
        changed = compare(old, golden, "configs") + compare(old_sweeps, sweeps, "sweeps")
        return 1 if changed else 0
    write(GOLDEN, golden, "configs")
    write(SWEEP_GOLDEN, sweeps, "sweeps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
