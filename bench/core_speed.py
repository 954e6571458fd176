#!/usr/bin/env python3
"""Times two servesim binaries side by side on one config and checks they give the same results.

Runs BASE and NEW alternately (BASE, NEW, BASE, NEW, ...) N times each on the same machine, and
prints each one's median user CPU, system CPU and wall time (from wait4's rusage of the process
alone, microsecond resolution), and the ratios BASE / NEW. Then compares the last runs'
outputs: requests.csv byte for byte in the columns both binaries write (an older binary lacks
later columns), and every figure of summary.json that both have (the `config` echo and the
version aside); any difference is printed and the exit status is 1.

An older BASE may read only uncompressed operator tables (before data/ shipped gzipped ones):
with --base-tables-from DIR, the .gz files under DIR are copied uncompressed into a temporary
folder and BASE runs with `--set step_time.operators.path=` that folder (configs with an
`operators:` section only).

  python3 bench/core_speed.py BASE NEW                       # the Azure benchmark, 5 runs each
  python3 bench/core_speed.py BASE NEW --runs 9 \
      --config bench/configs/vidur-azure-conv-llama2-7b-a100.yaml
"""

import argparse
import csv
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def uncompressed_copy(src, dst):
    for dirpath, _, files in os.walk(src):
        out = os.path.join(dst, os.path.relpath(dirpath, src))
        os.makedirs(out, exist_ok=True)
        for f in files:
            p = os.path.join(dirpath, f)
            if f.endswith(".gz"):
                with gzip.open(p, "rb") as i, open(os.path.join(out, f[:-3]), "wb") as o:
                    shutil.copyfileobj(i, o)
            else:
                shutil.copy(p, os.path.join(out, f))


def run(cmd):
    """User s, system s, wall s of one run of cmd (its output discarded; exit 1 on failure)."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{err}")
    return ru.ru_utime, ru.ru_stime, wall


def flatten(x, prefix, out):
    if isinstance(x, dict):
        for k, v in x.items():
            if prefix == "" and k in ("config", "servesim_version"):
                continue
            flatten(v, f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            flatten(v, f"{prefix}[{i}]", out)
    else:
        out[prefix] = x
    return out


def compare(base_dir, new_dir):
    ok = True
    with open(os.path.join(base_dir, "requests.csv")) as a, \
            open(os.path.join(new_dir, "requests.csv")) as b:
        ra, rb = csv.reader(a), csv.reader(b)
        ha, hb = next(ra), next(rb)
        common = [c for c in ha if c in hb]
        ia, ib = [ha.index(c) for c in common], [hb.index(c) for c in common]
        rows = 0
        for x, y in zip(ra, rb):
            rows += 1
            if [x[i] for i in ia] != [y[i] for i in ib]:
                print(f"requests.csv differs at row {rows}: {x} / {y}")
                ok = False
                break
        if next(ra, None) is not None or next(rb, None) is not None:
            print("requests.csv: the row counts differ")
            ok = False
    only_new = [c for c in hb if c not in ha]
    extra = f" (only in NEW: {', '.join(only_new)})" if only_new else ""
    print(f"requests.csv: {rows:,} rows, the {len(common)} columns both write "
          f"{'identical' if ok else 'DIFFER'}{extra}")
    sa = flatten(json.load(open(os.path.join(base_dir, "summary.json"))), "", {})
    sb = flatten(json.load(open(os.path.join(new_dir, "summary.json"))), "", {})
    keys = [k for k in sa if k in sb]
    diff = [k for k in keys if sa[k] != sb[k]]
    for k in diff[:10]:
        print(f"summary.json {k}: {sa[k]} / {sb[k]}")
    new_only = len([k for k in sb if k not in sa])
    print(f"summary.json: the {len(keys)} figures both have "
          f"{'identical' if not diff else 'DIFFER'} ({new_only} only in NEW)")
    return ok and not diff


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--config",
                    default=os.path.join(ROOT, "bench/configs/azure-conv-llama3.1-8b-h100.yaml"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--base-tables-from", metavar="DIR",
                    help="give BASE uncompressed copies of the operator tables under DIR")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base_cmd = [args.base, "run", args.config, "--out", os.path.join(tmp, "base"), "--quiet"]
        new_cmd = [args.new, "run", args.config, "--out", os.path.join(tmp, "new"), "--quiet"]
        if args.base_tables_from and "operators:" in open(args.config).read():
            tables = os.path.join(tmp, "tables")
            uncompressed_copy(args.base_tables_from, tables)
            base_cmd += ["--set", f"step_time.operators.path={tables}"]
        times = {"base": [], "new": []}
        for _ in range(args.runs):
            times["base"].append(run(base_cmd))
            times["new"].append(run(new_cmd))
        med = {k: [statistics.median(t[i] for t in v) for i in range(3)] for k, v in times.items()}
        print(f"{os.path.relpath(args.config, ROOT)}, {args.runs} runs each, medians:")
        for k, name in (("base", args.base), ("new", args.new)):
            u, s, w = med[k]
            print(f"  {k:4} user {u * 1e3:7.1f} ms  sys {s * 1e3:6.1f} ms  "
                  f"wall {w * 1e3:7.1f} ms  {name}")
        (bu, bs, bw), (nu, ns, nw) = med["base"], med["new"]
        print(f"  base / new: user {bu / nu:.2f}x, user + sys {(bu + bs) / (nu + ns):.2f}x, "
              f"wall {bw / nw:.2f}x")
        return 0 if compare(os.path.join(tmp, "base"), os.path.join(tmp, "new")) else 1


if __name__ == "__main__":
    sys.exit(main())
