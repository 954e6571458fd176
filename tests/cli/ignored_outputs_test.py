#!/usr/bin/env python3
"""Every default --out folder of a command (CommandLine::out_option in cli/*.cpp) is in
.gitignore and left out of the Docker context by .dockerignore, so that running a command in a
checkout leaves `git status` clean and the image's context small (docs/packaging.md#docker).

usage: ignored_outputs_test.py SOURCE_DIR
"""
import fnmatch
import glob
import os
import re
import sys

src = sys.argv[1]
folders = set()
for path in glob.glob(os.path.join(src, "cli", "*.cpp")):
    with open(path, encoding="utf-8") as f:
        folders.update(re.findall(r'out_option\("([^"]+)"', f.read()))


def patterns(name):
    with open(os.path.join(src, name), encoding="utf-8") as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]


git, docker = patterns(".gitignore"), patterns(".dockerignore")
failures = [f"{d}: not in .gitignore" for d in sorted(folders)
            if f"{d}/" not in git and d not in git]
failures += [f"{d}: not left out by .dockerignore" for d in sorted(folders)
             if not any(fnmatch.fnmatch(d, p.rstrip("/")) for p in docker)]
for f in failures:
    print(f"FAIL: {f}")
if not folders:
    failures.append("no out_option default found in cli/*.cpp")
    print("FAIL: no out_option default found in cli/*.cpp")
print(f"ignored_outputs: {len(folders)} default output folders ({', '.join(sorted(folders))})")
sys.exit(1 if failures else 0)
