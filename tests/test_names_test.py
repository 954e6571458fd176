#!/usr/bin/env python3
"""No Catch2 test name may hold a ';': catch_discover_tests passes each name to ctest as a
CMake list, so a ';' splits it, the filter matches nothing, and ctest reports the test passed
without running it. Usage: test_names_test.py SOURCE_DIR"""
import glob
import os
import re
import sys

root = sys.argv[1]
bad = []
for f in sorted(glob.glob(os.path.join(root, "tests", "**", "*.cpp"), recursive=True)):
    text = open(f, encoding="utf-8").read()
    for m in re.finditer(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"', text):
        if ";" in m.group(1):
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{os.path.relpath(f, root)}:{line}: {m.group(1)}")
for b in bad:
    print("test name with ';' (ctest would skip it):", b)
sys.exit(1 if bad else 0)
