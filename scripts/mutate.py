#!/usr/bin/env python3
"""Mutation testing for servesim: plant one small change at a time, rebuild, run the suite.

A mutant is one textual change on one line of one source file: a relational operator swap
(< <=, > >=, == !=), + and - swapped, an integer constant moved by one (0 <-> 1, n -> n+1),
&& and || swapped, std::min and std::max swapped, a ++/-- deleted, or a break/continue
deleted. Comments, string and character literals, #include and other preprocessor lines are
never touched. Binary operators are recognised by the spaces clang-format puts around them,
so template brackets (std::vector<int>) and references (T&&) are left alone.

For each mutant the file is rewritten, the test binary is rebuilt incrementally in a build
folder of its own (build-mut by default, so it never races the normal build), and the suite
runs with a timeout. A compile failure makes the mutant invalid (not counted); a failing or
timed-out suite kills it; a passing suite lets it survive.

What "the suite" is follows CI (scripts/test.sh), in three stages, each run only for a mutant
that every earlier stage let through (--stages ci, the default):
  unit  the Catch2 suite (tests/servesim_tests) of the Release build;
  ctest the rest of the Release ctest: every test that is not a Catch2 case (the shell, Python
        and script checks: doc figures, fault injection, signals, MPI runs, the Python module),
        after building every target; python_pip_install is left out (it builds the same
        sources a second time through pip; python_module runs the same module);
  asan  the Catch2 suite built by clang with AddressSanitizer and UBSan (CI's second build), in
        a folder of its own (BUILD-asan), so an out-of-bounds read or overflow the mutant
        causes is caught as CI would catch it.
--stages unit runs the first stage alone (the score before the eighth round; faster, for
practice). result.csv names the stage that killed each mutant. The file is restored after every
mutant whatever happens (a backup is kept under the build folder, and a backup left by an
interrupted run is restored before anything else). Run on demand; not part of CI.

  python3 scripts/mutate.py --list                       # enumerate mutants, no build
  python3 scripts/mutate.py --sample 60 --seed 1         # a deterministic sample
  python3 scripts/mutate.py --only sim/simulation.cpp:214:37:lt_le
  python3 scripts/mutate.py --files sim/cluster.cpp --sample 10

Prints the score (killed / valid) and each survivor, and writes BUILD/mutation/result.json
and result.csv. docs/testing.md records the latest run.

Mutants shown to be equivalent (no test can tell them from the original) are listed in
scripts/mutation_equivalent.txt, each with the reason, and matched by file, column, kind and
the source line's text (so a list entry survives edits elsewhere in the file). They still run:
a listed mutant that survives counts as equivalent and leaves the score's denominator; one
that is killed counts as killed and its entry is reported as stale.
"""

import argparse
import csv
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_GLOBS = ["sim/*.cpp", "schedulers/*.cpp", "models/*.cpp", "metrics/*.cpp", "core/kv/*.cpp",
                 "sizing/*.cpp"]
# The MPI sweep's rank exchange runs only under mpirun with several processes (the shell test
# tests/sizing/size_mpi_test.sh), never in the Catch2 suite, and its stand-in without MPI is
# not compiled when MPI is found: mutants there could only survive or fail to build.
# The parallel run's stand-in without MPI is not compiled either.
DEFAULT_EXCLUDE = {"sizing/sweep_mpi.cpp", "sizing/sweep_mpi_none.cpp", "sim/parallel_mpi_none.cpp"}
# Files with code that runs only with several MPI ranks: the parallel run's MpiWorld (MPI_Init,
# the collectives), its rank exchange, the parallel engine's lines for several ranks, and
# run_scenario's choice of how a launch of several ranks runs. A mutant there that the suite lets through is also run against the shell tests
# that start servesim under mpirun (ctest run_mpi and size_mpi_np*, about 5 s; skipped, so
# passing, where MPI or mpirun is missing).
MPI_FILES = {"sim/parallel_mpi.cpp", "sim/parallel_ranks.cpp", "sim/parallel_engine.cpp",
             "metrics/run_scenario.cpp"}
MPI_TESTS = "^(run_mpi|size_mpi_np[0-9]+)$"
# The Catch2 cases carry this ctest label (tests/CMakeLists.txt); the ctest stage runs the rest.
CATCH2_LABEL = "catch2"
CTEST_SKIPPED = "^python_pip_install$"
STAGES = {"unit": ["unit"], "ci": ["unit", "ctest", "asan"]}

# (kind, regex on the masked line, replacement function of the match text or None)
# Binary operators need a space on both sides (clang-format style), which excludes templates,
# shifts, -> and rvalue references.
OPERATOR_SWAPS = [
    ("lt_le", re.compile(r"(?<= )<(?= )"), "<="),
    ("le_lt", re.compile(r"(?<= )<=(?= )"), "<"),
    ("gt_ge", re.compile(r"(?<= )>(?= )"), ">="),
    ("ge_gt", re.compile(r"(?<= )>=(?= )"), ">"),
    ("eq_ne", re.compile(r"(?<= )==(?= )"), "!="),
    ("ne_eq", re.compile(r"(?<= )!=(?= )"), "=="),
    ("add_sub", re.compile(r"(?<= )\+(?= )"), "-"),
    ("sub_add", re.compile(r"(?<= )-(?= )"), "+"),
    ("addeq_subeq", re.compile(r"(?<= )\+=(?= )"), "-="),
    ("subeq_addeq", re.compile(r"(?<= )-=(?= )"), "+="),
    ("and_or", re.compile(r"(?<= )&&(?= )"), "||"),
    ("or_and", re.compile(r"(?<= )\|\|(?= )"), "&&"),
    ("min_max", re.compile(r"\bstd::min\b"), "std::max"),
    ("max_min", re.compile(r"\bstd::max\b"), "std::min"),
]
INT_CONST = re.compile(r"(?<![\w.])(\d+)([uUlL]*)(?![\w.'])")
INCDEC = re.compile(r"\+\+|--")
BREAK = re.compile(r"\b(break|continue);")


def mask_line(line, in_block):
    """Returns (masked, in_block): comments and literals replaced by spaces, same length."""
    out = []
    i, n = 0, len(line)
    while i < n:
        if in_block:
            end = line.find("*/", i)
            if end < 0:
                out.append(" " * (n - i))
                i = n
            else:
                out.append(" " * (end + 2 - i))
                i = end + 2
                in_block = False
            continue
        c = line[i]
        if line.startswith("//", i):
            out.append(" " * (n - i))
            break
        if line.startswith("/*", i):
            in_block = True
            out.append("  ")
            i += 2
            continue
        if c == 'R' and line.startswith('R"', i):  # raw string on one line: R"(...)"
            m = re.match(r'R"([^(\s]*)\(', line[i:])
            if m:
                close = line.find(")" + m.group(1) + '"', i)
                stop = n if close < 0 else close + len(m.group(1)) + 2
                out.append(" " * (stop - i))
                i = stop
                continue
        if c in "\"'":
            if c == "'" and i > 0 and line[i - 1].isalnum():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out), in_block


def mutants_of(path):
    rel = os.path.relpath(path, ROOT)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found = []
    in_block = False
    for ln, line in enumerate(lines, 1):
        masked, in_block = mask_line(line, in_block)
        if masked.lstrip().startswith("#"):
            continue
        if "static_assert" in masked or "throw " in masked and "InputError" in line:
            pass  # still mutated: messages are masked, conditions are real code

        def add(kind, col, old, new):
            found.append({"id": f"{rel}:{ln}:{col + 1}:{kind}", "file": rel, "line": ln,
                          "col": col + 1, "kind": kind, "old": old, "new": new,
                          "orig_line": line.strip()})

        for kind, rx, rep in OPERATOR_SWAPS:
            for m in rx.finditer(masked):
                add(kind, m.start(), m.group(0), rep)
        for m in INT_CONST.finditer(masked):
            v = int(m.group(1)) if not m.group(1).startswith("0") or m.group(1) == "0" else None
            if v is None:
                continue
            nv = 1 if v == 0 else (0 if v == 1 else v + 1)
            add("const", m.start(), m.group(0), f"{nv}{m.group(2)}")
        if not re.match(r"\s*for\s*\(", masked):  # a for loop without its step only hangs
            for m in INCDEC.finditer(masked):
                add("del_incdec", m.start(), m.group(0), "")
        for m in BREAK.finditer(masked):
            add("del_" + m.group(1), m.start(), m.group(0), ";")
    return found


def apply(m):
    path = os.path.join(ROOT, m["file"])
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    line = lines[m["line"] - 1]
    c = m["col"] - 1
    if line[c:c + len(m["old"])] != m["old"]:
        raise RuntimeError(f"{m['id']}: source changed since enumeration")
    lines[m["line"] - 1] = line[:c] + m["new"] + line[c + len(m["old"]):]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def backup_dir(build):
    return os.path.join(build, "mutation", "backup")


def restore_leftovers(build):
    bdir = backup_dir(build)
    if not os.path.isdir(bdir):
        return
    for dirpath, _, files in os.walk(bdir):
        for name in files:
            saved = os.path.join(dirpath, name)
            rel = os.path.relpath(saved, bdir)
            print(f"restoring {rel} from an interrupted run", file=sys.stderr)
            shutil.copyfile(saved, os.path.join(ROOT, rel))
            os.remove(saved)


def run(cmd, timeout, log, env=None):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, env=env)
        rc = p.returncode
        out = p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        rc = None
        out = (e.stdout or b"").decode(errors="replace")
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(cmd)}\n{out[-4000:]}\n")
    return rc, out, time.time() - t0


EQUIVALENT = os.path.join(ROOT, "scripts", "mutation_equivalent.txt")


def read_equivalent(path=EQUIVALENT):
    """{(file, col, kind, source line): reason} from `file | col:kind | reason | source line`."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.rstrip("\n").split(" | ", 3)]
            col_kind = parts[1].split(":") if len(parts) == 4 else []
            if len(col_kind) != 2 or not col_kind[0].isdigit():
                sys.exit(f"{path}:{n}: expected `file | col:kind | reason | source line`")
            out[(parts[0], int(col_kind[0]), col_kind[1], parts[3])] = parts[2]
    return out


def configure(build, sanitized=False):
    if os.path.exists(os.path.join(build, "build.ninja")):
        return
    # The libraries file by file (no unity build), so a mutant recompiles one file, not its
    # whole batch; the suite, which no mutant touches, in batches (about 4 CPU-minutes cold
    # instead of 20).
    cmd = ["cmake", "-S", ROOT, "-B", build, "-G", "Ninja", "-DSERVESIM_UNITY=OFF",
           "-DSERVESIM_TESTS_UNITY=ON"]
    if sanitized:
        # CI's sanitizer build (scripts/sanitize-build.sh) without the fuzzers and without -g:
        # clang, -O1, AddressSanitizer and UBSan, any report fatal.
        cmd += ["-DCMAKE_CXX_COMPILER=clang++", "-DCMAKE_BUILD_TYPE=Debug",
                "-DCMAKE_CXX_FLAGS_DEBUG=-O1", "-DSERVESIM_SANITIZE=ON", "-DSERVESIM_PYTHON=OFF"]
    else:
        cmd += ["-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ccache") and not os.environ.get("SERVESIM_NO_CCACHE"):
        os.environ.setdefault("CCACHE_BASEDIR", ROOT)
        cmd.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    subprocess.run(cmd, check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", nargs="*", help="source files (default: " + " ".join(DEFAULT_GLOBS) + ")")
    ap.add_argument("--sample", type=int, help="run a deterministic sample of this many mutants")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--list", action="store_true", help="print the mutants and stop")
    ap.add_argument("--only", action="append", help="run only this mutant id (repeatable)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build-mut"))
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--timeout", type=float, help="suite timeout in s (default 5x the baseline)")
    ap.add_argument("--out", help="result folder (default BUILD/mutation)")
    ap.add_argument("--stages", choices=sorted(STAGES), default="ci",
                    help="ci: the Catch2 suite, then the rest of ctest, then the Catch2 suite "
                         "under ASan/UBSan, each for what the last let through (default); "
                         "unit: the Catch2 suite alone")
    ap.add_argument("--asan-build", help="the sanitizer build folder (default BUILD-asan)")
    args = ap.parse_args()
    stages = STAGES[args.stages]

    build = os.path.abspath(args.build)
    restore_leftovers(build)
    files = args.files or sorted(
        f for g in DEFAULT_GLOBS for f in glob.glob(os.path.join(ROOT, g))
        if os.path.relpath(f, ROOT) not in DEFAULT_EXCLUDE)
    muts = [m for f in files for m in mutants_of(os.path.join(ROOT, f) if not os.path.isabs(f) else f)]
    if args.only:
        want = set(args.only)
        muts = [m for m in muts if m["id"] in want]
        missing = want - {m["id"] for m in muts}
        if missing:
            sys.exit(f"no such mutant: {', '.join(sorted(missing))}")
    elif args.sample is not None and args.sample < len(muts):
        muts = random.Random(args.seed).sample(muts, args.sample)
        muts.sort(key=lambda m: (m["file"], m["line"], m["col"], m["kind"]))
    if args.list:
        for m in muts:
            print(f"{m['id']}\t{m['old']!r} -> {m['new']!r}\t{m['orig_line']}")
        print(f"{len(muts)} mutants", file=sys.stderr)
        return 0

    out_dir = os.path.abspath(args.out or os.path.join(build, "mutation"))
    os.makedirs(out_dir, exist_ok=True)
    log = os.path.join(out_dir, "log.txt")
    open(log, "w").close()
    # The operator tables' binary cache (models/table_cache.h) in a folder of the run's own,
    # emptied before every suite: a mutant of the cache's code must not leave entries that a
    # later mutant (or the user's own runs, in ~/.cache/servesim) would read.
    cache = os.path.join(out_dir, "table-cache")
    test_env = dict(os.environ, SERVESIM_TABLE_CACHE=cache)

    def run_tests(cmd, timeout):
        shutil.rmtree(cache, ignore_errors=True)
        return run(cmd, timeout, log, test_env)

    configure(build)
    build_cmd = ["nice", "cmake", "--build", build, "-j", args.jobs, "--target", "servesim_tests"]
    # Both niced (+10), like every long job on a shared machine; run the script itself un-niced,
    # or the builds go to +19 and starve.
    test_cmd = ["nice", os.path.join(build, "tests", "servesim_tests"), "--abort"]
    rc, out, _ = run(build_cmd, None, log)
    if rc != 0:
        sys.exit("the unmutated sources do not build in " + build + "\n" + out[-2000:])
    mpi_build_cmd = build_cmd[:-1] + ["servesim"]
    mpi_test_cmd = ["nice", "ctest", "--test-dir", build, "-R", MPI_TESTS]
    # Stage ctest: every target, then every ctest test but the Catch2 cases.
    all_build_cmd = build_cmd[:-2]
    ctest_cmd = ["nice", "ctest", "--test-dir", build, "-j", args.jobs, "-LE", CATCH2_LABEL,
                 "-E", CTEST_SKIPPED]
    asan = os.path.abspath(args.asan_build or build + "-asan")
    asan_build_cmd = ["nice", "cmake", "--build", asan, "-j", args.jobs, "--target", "servesim_tests"]
    asan_test_cmd = ["nice", os.path.join(asan, "tests", "servesim_tests"), "--abort"]
    any_mpi = "ctest" not in stages and any(m["file"] in MPI_FILES for m in muts)
    if any_mpi:
        rc, out, _ = run(mpi_build_cmd, None, log)
        rc = rc if rc != 0 else run_tests(mpi_test_cmd, None)[0]
        if rc != 0:
            sys.exit("the unmutated MPI shell tests fail; fix them before measuring mutants\n" +
                     out[-2000:])
    rc, out, base = run_tests(test_cmd, None)
    if rc != 0:
        sys.exit("the unmutated suite fails; fix it before measuring mutants\n" + out[-2000:])
    timeout = args.timeout or max(30.0, 5 * base)
    timeouts = {"unit": timeout}
    baseline = f"baseline suite {base:.1f} s"
    stage_cmds = {"unit": (build_cmd, test_cmd), "ctest": (all_build_cmd, ctest_cmd),
                  "asan": (asan_build_cmd, asan_test_cmd)}
    # The later stages' unmutated runs: each must pass, and gives its stage's timeout.
    for stage, what in (("ctest", "the rest of ctest"), ("asan", "the sanitized suite")):
        if stage not in stages:
            continue
        if stage == "asan":
            configure(asan, sanitized=True)
        rc, out, _ = run(stage_cmds[stage][0], None, log)
        rc, out, sbase = (rc, out, 0.0) if rc != 0 else run_tests(stage_cmds[stage][1], None)
        if rc != 0:
            sys.exit(f"{what} fails unmutated; fix it before measuring mutants\n" + out[-3000:])
        timeouts[stage] = args.timeout or max(60.0, 5 * sbase)
        baseline += f", {what} {sbase:.1f} s"
    print(f"{baseline}; timeout {timeout:.0f} s; {len(muts)} mutants; stages {' '.join(stages)}",
          flush=True)

    results = []
    for i, m in enumerate(muts, 1):
        src = os.path.join(ROOT, m["file"])
        saved = os.path.join(backup_dir(build), m["file"])
        os.makedirs(os.path.dirname(saved), exist_ok=True)
        shutil.copyfile(src, saved)
        bt = tt = 0.0
        stage_hit = ""
        try:
            apply(m)
            status = "survived"
            for stage in stages:
                bcmd, tcmd = stage_cmds[stage]
                rc, _, sbt = run(bcmd, 1800, log)
                bt += sbt
                if rc != 0:
                    # The first build decides validity; a later build that refuses what g++
                    # compiled (clang) cannot tell the mutant apart: it stays a survivor.
                    if stage == "unit":
                        status = "invalid"
                    break
                rc, _, stt = run_tests(tcmd, timeouts[stage])
                tt += stt
                status = "timeout" if rc is None else ("survived" if rc == 0 else "killed")
                if status != "survived":
                    stage_hit = stage
                    break
            if status == "survived" and any_mpi and m["file"] in MPI_FILES:
                rc, _, _ = run(mpi_build_cmd, 1800, log)
                if rc == 0:
                    rc, _, mt = run_tests(mpi_test_cmd, timeout)
                    tt += mt
                    status = "timeout" if rc is None else ("survived" if rc == 0 else "killed")
                    stage_hit = "" if status == "survived" else "mpi"
        finally:
            shutil.copyfile(saved, src)
            os.remove(saved)
        m = dict(m, status=status, stage=stage_hit, build_s=round(bt, 1), test_s=round(tt, 1))
        results.append(m)
        where = f" ({stage_hit})" if stage_hit and stage_hit != "unit" else ""
        print(f"[{i}/{len(muts)}] {status:8s} {m['id']}  {m['old']!r} -> {m['new']!r}{where}",
              flush=True)

    # Leave the build matching the restored sources.
    run(build_cmd if "ctest" not in stages else all_build_cmd, None, log)
    if any_mpi:
        run(mpi_build_cmd, None, log)
    if "asan" in stages:
        run(asan_build_cmd, None, log)
    equivalent = read_equivalent()
    stale = []
    for r in results:
        key = (r["file"], r["col"], r["kind"], r["orig_line"])
        if key not in equivalent:
            continue
        if r["status"] == "survived":
            r["status"] = "equivalent"
            r["reason"] = equivalent[key]
        elif r["status"] in ("killed", "timeout"):
            stale.append(r)
    valid = [r for r in results if r["status"] != "invalid"]
    killed = [r for r in valid if r["status"] in ("killed", "timeout")]
    survivors = [r for r in valid if r["status"] == "survived"]
    equiv = [r for r in valid if r["status"] == "equivalent"]
    counted = len(valid) - len(equiv)
    raw = len(killed) / len(valid) if valid else 0.0
    score = len(killed) / counted if counted else 0.0
    summary = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "command": " ".join(sys.argv), "mutants": len(results), "valid": len(valid),
               "killed": len(killed), "survived": len(survivors), "equivalent": len(equiv),
               "invalid": len(results) - len(valid), "raw_score": round(raw, 4),
               "score": round(score, 4), "stages": stages,
               "killed_by_stage": {st: sum(1 for r in killed if r["stage"] == st)
                                   for st in stages + (["mpi"] if any_mpi else [])},
               "results": results}
    with open(os.path.join(out_dir, "result.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(out_dir, "result.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["id", "file", "line", "col", "kind", "old", "new",
                                          "status", "stage", "build_s", "test_s", "orig_line", "reason"])
        w.writeheader()
        for r in results:
            w.writerow(r)
    print(f"\nscore {len(killed)}/{counted} = {100 * score:.1f}% of valid mutants killed, "
          f"leaving out {len(equiv)} known equivalent ({len(killed)}/{len(valid)} = "
          f"{100 * raw:.1f}% of all valid; {len(results) - len(valid)} invalid)")
    print("killed by stage: " + ", ".join(f"{st} {n}" for st, n in summary["killed_by_stage"].items()))
    for r in stale:
        print(f"  stale equivalent entry, killed: {r['id']}  {r['orig_line']}")
    for r in equiv:
        print(f"  equivalent {r['file']}:{r['line']}  ({r['old']} -> {r['new'] or 'deleted'}): {r['reason']}")
    for r in survivors:
        print(f"  survived {r['file']}:{r['line']}  {r['orig_line']}  ({r['old']} -> {r['new'] or 'deleted'})")
    print(f"results: {out_dir}/result.json, result.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
