#!/usr/bin/env python3
"""Copy the datasets the shipped configs read from ../shared/data into the repository's data/.

Every file is copied verbatim; a table larger than GZIP_OVER bytes is stored gzipped instead
(`gzip -9 -n`: no name or time stamp in the header, so the bytes depend only on the contents),
and servesim's readers open `name.csv` as `name.csv.gz` when only that is there. Each top folder
gets a SOURCES.md with its rows of ../shared/data/SOURCES.md (repository, path, commit, licence).

usage: scripts/import_data.py [--shared ../shared/data] [--out data]
Run it again after adding a folder to FOLDERS; it rewrites data/ from scratch (README.md and the
LICENSE files copied by hand stay).
"""
import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GZIP_OVER = 100 * 1024  # bytes
GZIP_SUFFIXES = (".csv", ".jsonl")

# (folder under data/ whose SOURCES.md lists the files, folders or files under it to copy)
FOLDERS = [
    ("timings/aiconfigurator", ["."]),
    ("timings/llmservingsim", [
        "perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/meta.yaml",
        "perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/tp1",
        "perf/RTX4090/meta-llama/Llama-3.1-8B/bf16/meta.yaml",
        "perf/RTX4090/meta-llama/Llama-3.1-8B/bf16/tp1",
        "perf/RTXPRO6000/Qwen/Qwen3-32B/bf16/meta.yaml",
        "perf/RTXPRO6000/Qwen/Qwen3-32B/bf16/tp2",
        "perf/RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16/meta.yaml",
        "perf/RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16/tp1",
    ]),
    ("serving-runs/vllm-0.19", [
        "RTX4090/Llama-3.1-8B/vllm/requests.jsonl",
        "RTXPRO6000/Llama-3.1-8B/vllm/requests.jsonl",
        "RTXPRO6000/Qwen3-32B/vllm/requests.jsonl",
        "RTXPRO6000/Qwen3-30B-A3B-Instruct-2507/vllm/requests.jsonl",
    ]),
    ("timings/splitwise", ["perf_model.csv"]),
]
KEEP = {"README.md", "LICENSE"}  # written by hand in data/<folder>, never removed


def files_under(base, rel):
    p = os.path.join(base, rel)
    if os.path.isfile(p):
        return [os.path.normpath(rel)]
    out = []
    for d, _, names in os.walk(p):
        for n in names:
            out.append(os.path.normpath(os.path.relpath(os.path.join(d, n), base)))
    return sorted(out)


def copy(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.getsize(src) > GZIP_OVER and src.endswith(GZIP_SUFFIXES):
        with open(dst + ".gz", "wb") as f:  # -n: no name or time stamp in the header
            subprocess.run(["gzip", "-9", "-n", "-c", src], stdout=f, check=True)
        return os.path.basename(dst) + ".gz"
    shutil.copyfile(src, dst)
    return os.path.basename(dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--out", default=os.path.join(ROOT, "data"))
    a = ap.parse_args()
    sources = os.path.join(a.shared, "SOURCES.md")
    if not os.path.isfile(sources):
        sys.exit(f"import_data: {sources} is missing: this script copies from ../shared/data, "
                 "which only the project's own machines have (data/ is already in the repository)")
    rows = {}
    with open(sources, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 5 and "/" in cells[0]:
                rows[cells[0]] = cells
    for folder, parts in FOLDERS:
        src_base = os.path.join(a.shared, folder)
        dst_base = os.path.join(a.out, folder)
        if os.path.isdir(dst_base):
            for d, _, names in os.walk(dst_base, topdown=False):
                for n in names:
                    if not (d == dst_base and n in KEEP):
                        os.remove(os.path.join(d, n))
                if d != dst_base and not os.listdir(d):
                    os.rmdir(d)
        table = []
        for part in parts:
            for rel in files_under(src_base, part):
                name = os.path.basename(rel)
                stored = copy(os.path.join(src_base, rel), os.path.join(dst_base, rel))
                key = f"{folder}/{rel}"
                if key not in rows:
                    if name in ("README.md", "index.csv") or rel.startswith("systems/"):
                        row = None  # written for the copy in ../shared/data; see its README.md
                    else:
                        sys.exit(f"import_data: {key} has no row in {sources}")
                else:
                    row = rows[key]
                stored_rel = os.path.join(os.path.dirname(rel), stored)
                table.append((stored_rel, row))
        with open(os.path.join(dst_base, "SOURCES.md"), "w", encoding="utf-8") as f:
            f.write(f"# data/{folder}: where each file comes from\n\n")
            f.write("Copied from the project's data collection by `scripts/import_data.py`. Each "
                    "file is a verbatim copy of a public file (a `.gz` file is that file gzipped "
                    "with `gzip -9 -n`; `gunzip -k` gives it back byte for byte). The licence "
                    "terms are the source repository's: keep them, and cite the repository.\n\n")
            f.write("| file | repository | path there | commit | licence |\n|---|---|---|---|---|\n")
            for stored_rel, row in table:
                if row is None:
                    f.write(f"| {stored_rel} | (written for this collection: see README.md) "
                            "| | | |\n")
                else:
                    f.write(f"| {stored_rel} | {row[1]} | {row[2]} | {row[3]} | {row[4]} |\n")
        print(f"data/{folder}: {len(table)} files")


if __name__ == "__main__":
    main()
