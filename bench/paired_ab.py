#!/usr/bin/env python3
"""Times servesim binaries on one config in random order each round, and compares them in pairs.

On a virtual machine whose speed swings by tens of percent within a minute, medians of separate
series mislead; runs taken in the same round share the host's state. Each round runs every
binary once, in a fresh random order, and each binary's time is compared with the first
binary's of the same round. Prints, per binary, the median, minimum and first quartile of its
wall times (ms, from wait4 around the process) and the median of the paired ratios
first / this (above 1: faster than the first). Outputs go to temporary folders; compare them
with bench/core_speed.py, which checks the results as well.

  python3 bench/paired_ab.py 60 bench/configs/vidur-azure-conv-llama2-7b-a100.yaml BASE NEW
"""

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rounds, config, binaries = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    times = [[] for _ in binaries]
    tmp = tempfile.mkdtemp(prefix="paired_ab.")
    try:
        for _ in range(rounds):
            order = list(range(len(binaries)))
            random.shuffle(order)
            for i in order:
                cmd = [binaries[i], "run", config, "--out", os.path.join(tmp, str(i)), "--quiet"]
                start = time.perf_counter()
                p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
                _, status, _ = os.wait4(p.pid, 0)
                if os.waitstatus_to_exitcode(status) != 0:
                    sys.exit(f"{' '.join(cmd)} failed")
                times[i].append((time.perf_counter() - start) * 1e3)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for i, b in enumerate(binaries):
        ratio = statistics.median(x / y for x, y in zip(times[0], times[i]))
        print(f"{b:40s} median {statistics.median(times[i]):7.2f}  min {min(times[i]):7.2f}  "
              f"p25 {statistics.quantiles(times[i], n=4)[0]:7.2f}  paired first/this {ratio:.3f}")


if __name__ == "__main__":
    main()
