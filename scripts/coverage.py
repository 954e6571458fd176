#!/usr/bin/env python3
"""Line and branch coverage of the Catch2 suite over the files scripts/mutate.py mutates.

A mutant on a line the suite never runs survives for sure, and so does one on a branch the
suite never takes: this lists both, file by file, so tests can be aimed at them before a
mutation sample is drawn. Standard library only; needs gcc's gcov (no gcovr, no lcov).

  python3 scripts/coverage.py                      # configure, build, run, report (build-cov)
  python3 scripts/coverage.py --no-build           # rerun the suite and report on what is built
  python3 scripts/coverage.py --report-only        # report on the .gcda files already there
  python3 scripts/coverage.py --uncovered models/catalog.cpp   # the lines and branches missed

The build folder (build-cov by default) is configured like build-mut (libraries file by file,
the suite in batches) but Debug, -O0 and --coverage. The suite is `servesim_tests` alone, the
binary mutate.py runs. Branches gcc adds for exceptions (gcov's "throw" branches) are left out;
a line counts as covered when any of its code ran, a branch when it was taken at least once.
Writes BUILD/coverage/summary.json (per file and per layer) and uncovered.txt (every line never
run and every line with a branch never taken, with its text).
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from mutate import DEFAULT_EXCLUDE, DEFAULT_GLOBS  # noqa: E402  (the same files, one list)


def default_files():
    return sorted(
        os.path.relpath(f, ROOT) for g in DEFAULT_GLOBS for f in glob.glob(os.path.join(ROOT, g))
        if os.path.relpath(f, ROOT) not in DEFAULT_EXCLUDE)


def configure_and_build(build):
    if not os.path.exists(os.path.join(build, "build.ninja")):
        cmd = ["cmake", "-S", ROOT, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Debug",
               "-DSERVESIM_UNITY=OFF", "-DSERVESIM_TESTS_UNITY=ON", "-DSERVESIM_PYTHON=OFF",
               "-DSERVESIM_MPI=OFF", "-DCMAKE_CXX_FLAGS=--coverage -O0",
               "-DCMAKE_EXE_LINKER_FLAGS=--coverage"]
        if shutil.which("ccache") and not os.environ.get("SERVESIM_NO_CCACHE"):
            os.environ.setdefault("CCACHE_BASEDIR", ROOT)
            cmd.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["nice", "cmake", "--build", build, "--target", "servesim_tests"], check=True)


def run_suite(build):
    for f in glob.glob(os.path.join(build, "**", "*.gcda"), recursive=True):
        os.remove(f)
    t0 = time.time()
    rc = subprocess.run([os.path.join(build, "tests", "servesim_tests")], cwd=build,
                        stdout=subprocess.DEVNULL).returncode
    print(f"suite: exit {rc}, {time.time() - t0:.1f} s (with coverage counters)")
    if rc != 0:
        print("warning: the suite failed; the figures cover the cases that ran", file=sys.stderr)


def gcov_of(build, src):
    """gcov's JSON for one library source, or None when it has no counters (never built/run)."""
    hits = glob.glob(os.path.join(build, "CMakeFiles", "*.dir", src + ".gcda"))
    if not hits:
        return None
    out = subprocess.run(["gcov", "-b", "-j", "-t", hits[0]], cwd=build, capture_output=True,
                         text=True, check=True).stdout
    want = os.path.join(ROOT, src)
    for doc in out.splitlines():
        doc = doc.strip()
        if not doc:
            continue
        for f in json.loads(doc).get("files", []):
            path = f["file"] if os.path.isabs(f["file"]) else os.path.join(build, f["file"])
            if os.path.realpath(path) == os.path.realpath(want):
                return f
    return None


def measure(build, src):
    """Per line: (ran, [taken?] for each non-exception branch), merged over instantiations."""
    f = gcov_of(build, src)
    lines = {}
    if f is None:
        return lines
    for ln in f["lines"]:
        n = ln["line_number"]
        ran, branches = lines.get(n, (False, []))
        br = [b["count"] > 0 for b in ln.get("branches", []) if not b.get("throw")]
        if branches and len(branches) == len(br):
            br = [a or b for a, b in zip(branches, br)]
        elif branches:
            br = branches + br
        lines[n] = (ran or ln["count"] > 0, br)
    return lines


def layer(src):
    return "core/kv" if src.startswith("core/kv/") else src.split("/")[0]


def pct(a, b):
    return f"{100.0 * a / b:5.1f}%" if b else "   - "


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-cov"))
    ap.add_argument("--no-build", action="store_true", help="run the suite on what is built")
    ap.add_argument("--report-only", action="store_true", help="use the counters already there")
    ap.add_argument("--uncovered", nargs="*", metavar="FILE",
                    help="print the lines never run and the branches never taken of these files")
    ap.add_argument("--per-file", action="store_true", help="print every file's figures")
    ap.add_argument("--never-run", metavar="OUT",
                    help="also write the lines never run alone, `file:line: text`, under a "
                    "per-file summary (lines, run, never run); scripts/coverage.sh uses it")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    if not args.report_only:
        if not args.no_build:
            configure_and_build(build)
        run_suite(build)

    files = default_files()
    per_file, layers = {}, {}
    report, never_run = [], []
    for src in files:
        lines = measure(build, src)
        text = open(os.path.join(ROOT, src), encoding="utf-8").read().splitlines()
        lt = len(lines)
        lc = sum(1 for ran, _ in lines.values() if ran)
        bt = sum(len(b) for _, b in lines.values())
        bc = sum(sum(b) for _, b in lines.values())
        per_file[src] = {"lines": lt, "lines_run": lc, "branches": bt, "branches_taken": bc}
        agg = layers.setdefault(layer(src), [0, 0, 0, 0])
        for i, v in enumerate((lt, lc, bt, bc)):
            agg[i] += v
        missed = []
        for n in sorted(lines):
            ran, br = lines[n]
            src_line = text[n - 1].strip() if n - 1 < len(text) else ""
            if not ran:
                missed.append(f"  {n:5d} never run      {src_line}")
                never_run.append(f"{src}:{n}: {src_line}")
            elif br and not all(br):
                missed.append(f"  {n:5d} {sum(br)}/{len(br)} branches  {src_line}")
        if missed:
            report.append(f"{src}: lines {lc}/{lt}, branches {bc}/{bt}")
            report.extend(missed)
        if args.uncovered is not None and src in args.uncovered:
            print(f"{src}: lines {lc}/{lt}, branches {bc}/{bt}")
            print("\n".join(missed))

    out_dir = os.path.join(build, "coverage")
    os.makedirs(out_dir, exist_ok=True)
    summary = {"files": per_file, "layers": {k: dict(zip(
        ("lines", "lines_run", "branches", "branches_taken"), v)) for k, v in layers.items()}}
    with open(os.path.join(out_dir, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1, sort_keys=True)
    with open(os.path.join(out_dir, "uncovered.txt"), "w") as fh:
        fh.write("\n".join(report) + "\n")

    if args.never_run:
        with open(args.never_run, "w") as fh:
            fh.write(f"# {'file':43s} {'lines':>6s} {'run':>6s} {'never run':>9s}\n")
            for src, v in per_file.items():
                fh.write(f"# {src:43s} {v['lines']:6d} {v['lines_run']:6d} "
                         f"{v['lines'] - v['lines_run']:9d}\n")
            fh.write("\n".join(never_run) + "\n")
        print(f"written: {args.never_run}")

    if args.per_file:
        for src, v in per_file.items():
            print(f"{src:45s} lines {pct(v['lines_run'], v['lines'])}  "
                  f"branches {pct(v['branches_taken'], v['branches'])}")
    print(f"{'layer':10s} {'lines':>18s} {'branches':>18s}")
    tot = [0, 0, 0, 0]
    for k in sorted(layers):
        lt, lc, bt, bc = layers[k]
        tot = [a + b for a, b in zip(tot, layers[k])]
        print(f"{k:10s} {lc:6d}/{lt:<6d} {pct(lc, lt)} {bc:6d}/{bt:<6d} {pct(bc, bt)}")
    lt, lc, bt, bc = tot
    print(f"{'all':10s} {lc:6d}/{lt:<6d} {pct(lc, lt)} {bc:6d}/{bt:<6d} {pct(bc, bt)}")
    print(f"written: {os.path.relpath(out_dir, ROOT)}/summary.json, uncovered.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
