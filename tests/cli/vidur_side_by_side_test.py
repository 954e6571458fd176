#!/usr/bin/env python3
"""bench/vidur_side_by_side.py with a stand-in for Vidur (Vidur is not installed here): the trace
it is given holds the bench config's requests in Vidur's columns (after the config's context
cap), the start-up trace the first 10, every round runs both, and the medians and ratios print.

  vidur_side_by_side_test.py SERVESIM PROJECT_DIR WORK_DIR
"""
import csv
import os
import re
import shutil
import subprocess
import sys


def main():
    servesim, root, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    fake = os.path.join(work, "fake_vidur.py")
    with open(fake, "w") as f:
        f.write("import csv, os, sys\n"
                "trace, out = sys.argv[1:3]\n"
                "rows = list(csv.DictReader(open(trace)))\n"
                "assert list(rows[0]) == ['arrived_at', 'num_prefill_tokens', 'num_decode_tokens']\n"
                "os.makedirs(out, exist_ok=True)\n"
                "open(os.path.join(out, 'count'), 'w').write(str(len(rows)))\n"
                "assert max(int(r['num_prefill_tokens']) + int(r['num_decode_tokens'])"
                " for r in rows) <= 4096\n")
    keep = os.path.join(work, "keep")
    r = subprocess.run([sys.executable, os.path.join(root, "bench", "vidur_side_by_side.py"),
                        "--vidur", f"{sys.executable} {fake} {{trace}} {{out}}",
                        "--servesim", servesim, "--rounds", "2", "--servesim-runs", "1",
                        "--work", keep], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    counts = {d: open(os.path.join(keep, d, "count")).read() for d in
              ("vidur1", "vidur-first1", "vidur2", "vidur-first2")}
    assert counts == {"vidur1": "19366", "vidur-first1": "10", "vidur2": "19366",
                      "vidur-first2": "10"}, counts
    with open(os.path.join(keep, "vidur-trace.csv")) as f:
        first = next(csv.DictReader(f))
    assert first == {"arrived_at": "0.000000000", "num_prefill_tokens": "374",
                     "num_decode_tokens": "44"}, first
    assert len(re.findall(r"^\| [12] \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$",
                          r.stdout, re.M)) == 2, r.stdout
    assert re.search(r"^Vidur / servesim: [0-9,.]+x; without Vidur's start-up -?[0-9,.]+x$",
                     r.stdout, re.M), r.stdout
    bad = subprocess.run([sys.executable, os.path.join(root, "bench", "vidur_side_by_side.py"),
                          "--vidur", "vidur --trace x", "--servesim", servesim],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "{trace} and {out}" in bad.stderr, bad.stderr
    print("vidur side by side: passed")


if __name__ == "__main__":
    main()
