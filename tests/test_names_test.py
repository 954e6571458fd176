#!/usr/bin/env python3
"""Two rules for the Catch2 test files. Usage: test_names_test.py SOURCE_DIR
1. No test name may hold a ';': catch_discover_tests passes each name to ctest as a CMake list,
   so a ';' splits it, the filter matches nothing, and ctest reports the test passed without
   running it.
2. Each tests/**/*_test.cpp (but main_test.cpp) keeps its names in its own namespace,
   t_<folder>_<file>, opened after its #includes and closed at its end: the suite compiles as a
   unity build, and two files' helpers of one name (k_data, scenario(), ...) in a shared
   translation unit clash only when the batches happen to put them together."""
import glob
import os
import re
import sys

root = sys.argv[1]
bad = []
for f in sorted(glob.glob(os.path.join(root, "tests", "**", "*.cpp"), recursive=True)):
    text = open(f, encoding="utf-8").read()
    rel = os.path.relpath(f, root)
    for m in re.finditer(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"', text):
        if ";" in m.group(1):
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"test name with ';' (ctest would skip it): {rel}:{line}: {m.group(1)}")
    if not rel.endswith("_test.cpp") or rel == os.path.join("tests", "main_test.cpp"):
        continue
    name = "t_" + re.sub(r"[^A-Za-z0-9]", "_", os.path.relpath(f, os.path.join(root, "tests"))[:-4])
    opened = re.search(r"^namespace " + name + r" \{$", text, re.M)
    last_include = max((m.end() for m in re.finditer(r"^#include .*$", text, re.M)), default=0)
    closed = text.rstrip().endswith("}  // namespace " + name)
    if not opened or opened.start() < last_include or not closed:
        bad.append(f"{rel}: the file's code belongs in 'namespace {name} {{' ... "
                   f"'}}  // namespace {name}', after its #includes (tests/CMakeLists.txt: "
                   "unity build)")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
