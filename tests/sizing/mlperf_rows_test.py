#!/usr/bin/env python3
"""Published MLPerf rows read from their own columns (scripts/mlperf_rows.py), no ../shared:
the parser's self-check; scripts/predict_mlperf.py and scripts/mlperf_capacity.py on made-up
rows in the development set's format (tests/data/mlperf_rows_tiny.csv): every row the catalogue
covers gets a figure, the others are listed with the reason; and bad rows are refused (exit 2)
naming the file, the line or the column.

  mlperf_rows_test.py SERVESIM PROJECT_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys


def main():
    servesim, root, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    scripts = os.path.join(root, "scripts")
    rows = os.path.join(root, "tests", "data", "mlperf_rows_tiny.csv")
    absent = os.path.join(work, "no-shared-data")  # --data that is not there

    def script(name, *args):
        return subprocess.run([sys.executable, os.path.join(scripts, name), *args],
                              capture_output=True, text=True, timeout=240)

    r = script("mlperf_rows.py", "--self-check")
    assert r.returncode == 0, r.stdout + r.stderr

    r = script("predict_mlperf.py", "--servesim", servesim, "--data", absent, "--rows", rows,
               "--requests", "300")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = {}
    for line in r.stdout.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 10 and cells[0].startswith("t_"):
            lines[(cells[0], cells[1])] = cells
    built = [("t_h100_trt_l31_8b_srv", "ttft_mean"), ("t_h100_trt_l31_8b_srv", "tpot_p99"),
             ("t_h100_trt_l31_8b_off", "tokens_per_s"), ("t_a100_vllm_l2_70b_off", "tokens_per_s")]
    for key in built:
        cells = lines[key]
        assert re.fullmatch(r"[0-9.]+\*?", cells[3]) and float(cells[3].rstrip("*")) > 0, cells
        assert re.fullmatch(r"[+-][0-9]+%", cells[4]), cells
    assert lines[built[0]][9] == "tables h100_sxm/trtllm", lines[built[0]]
    assert lines[built[3]][9] == "tables a100_sxm/vllm (d)", lines[built[3]]  # V1 under kind: vllm
    assert "not built: no hardware catalogue entry for 'Intel Gaudi 3'" in \
        lines[("t_gaudi3_trt_l31_8b_off", "tokens_per_s")][3]
    assert "not built: t_h100_trt_gemma_off: no models catalogue entry for 'Gemma-2-9B'" in r.stdout
    # Offline throughput is the replicas' sum: the Offline figure, not a per-replica one.
    assert "- operator model: median |error|" in r.stdout and "over 4 figures" in r.stdout

    r = script("mlperf_capacity.py", "--servesim", servesim, "--data", absent, "--rows", rows,
               "--tolerance", "0.1")
    assert r.returncode == 0, r.stdout + r.stderr
    cap = [line for line in r.stdout.splitlines() if line.startswith("| t_h100_trt_l31_8b_srv |")]
    assert cap and re.search(r"\| llama3_1-8b \| 600 \| 20 \| [0-9.]+ \| [+-][0-9]+% \|", cap[0]), \
        r.stdout

    # Bad rows: exit 2, the file and what is wrong named.
    with open(rows) as f:
        header, first = f.readline(), f.readline()
    cases = [
        (header.replace("hardware,", "hw,"), first, "no column hardware"),
        (header, first.replace(",ttft_mean,60,", ",ttft_mean,fast,"), ":2: value 'fast'"),
        (header, first.replace(",ttft_mean,", ",e2e_mean,"), ":2: metric 'e2e_mean'"),
    ]
    for n, (h, row, says) in enumerate(cases):
        path = os.path.join(work, f"bad{n}.csv")
        with open(path, "w") as f:
            f.write(h + row)
        r = script("predict_mlperf.py", "--servesim", servesim, "--data", absent, "--rows", path)
        assert r.returncode == 2 and path in r.stderr and says in r.stderr, (says, r.stderr)
    r = script("predict_mlperf.py", "--data", absent, "--rows", os.path.join(work, "none.csv"))
    assert r.returncode == 2 and "none.csv" in r.stderr, r.stderr
    print("mlperf rows: passed")


if __name__ == "__main__":
    main()
