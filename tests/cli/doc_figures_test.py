#!/usr/bin/env python3
"""scripts/doc_figures.py on the fixtures of tests/data/doc-figures/ (docs/testing.md, "Doc
figures come from commands"): fresh.md passes --check; stale.md fails it, naming the doc and
line of each stale block and figure; a rewrite of stale.md gives fresh.md.

usage: doc_figures_test.py SERVESIM SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

servesim, src = sys.argv[1], sys.argv[2]
script = os.path.join(src, "scripts", "doc_figures.py")
fixtures = os.path.join(src, "tests", "data", "doc-figures")


def run(*args):
    p = subprocess.run([sys.executable, script, "--servesim", servesim, *args],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


failures = []
code, out = run("--check", "--docs", os.path.join(fixtures, "fresh.md"))
if code != 0 or "6 figures rerun, 0 stale" not in out:
    failures.append(f"fresh.md: exit {code}, expected 0:\n{out}")

code, out = run("--check", "--docs", os.path.join(fixtures, "stale.md"))
expected = [
    "stale.md:5: the block below differs from what its command prints now",
    "-three\n+two",
    "stale.md:33: n[0] is 2,001 now; the doc says 2,000 (line 31)",
    "stale.md:43: /b is (\\d+)/ is 8 now; the doc says 7 (line 41)",
    "stale.md:49: the block below differs",
    "6 figures rerun, 4 stale",
]
if code != 1 or any(e not in out for e in expected):
    failures.append(f"stale.md: exit {code}, expected 1 and {expected}:\n{out}")

work = tempfile.mkdtemp(prefix="doc-figures-test-")
try:
    copy = os.path.join(work, "stale.md")
    shutil.copy(os.path.join(fixtures, "stale.md"), copy)
    code, out = run("--docs", copy)
    with open(copy) as a, open(os.path.join(fixtures, "fresh.md")) as b:
        if code != 0 or a.read() != b.read():
            failures.append(f"the rewrite of stale.md (exit {code}) is not fresh.md:\n{out}")
finally:
    shutil.rmtree(work)

for f in failures:
    print(f"FAIL: {f}")
print("doc_figures_test:",
      "failed" if failures else "the fixtures check, fail and rewrite as expected")
sys.exit(1 if failures else 0)
