#!/usr/bin/env python3
"""The servesim command built with SERVESIM_STATIC_DEPS (CMakeLists.txt; docs/performance.md,
issue 34, branch s51a) loads no shared library but glibc's and libgcc_s, and what it took from the
libraries built in works: fmt's formatting (a number in an error message and in the tables),
spdlog's coloured stderr logger (SERVESIM_LOG=debug), yaml-cpp's parser (a config file), zlib
(a gzipped operator table), Boost.Program_options (an option's value checked) and libstdc++'s
exceptions (an error thrown deep in a run and caught at the top, and one thrown inside
std::call_once, whose pthread_once frame glibc's libgcc_s unwinds: exit status 2 each).

usage: static_deps_test.py SERVESIM STATIC(ON|OFF) SOURCE_DIR WORK_DIR
Exits 77 (skipped) for a build with the option off, which links the shared libraries.
"""
import os
import re
import shutil
import subprocess
import sys

servesim, static, src, work = sys.argv[1:5]
if static.upper() not in ("ON", "1", "TRUE", "YES"):
    print("SERVESIM_STATIC_DEPS is off in this build: the command links the shared libraries")
    sys.exit(77)
if shutil.which("readelf") is None:
    print("readelf (binutils) not found")
    sys.exit(77)

failures = []
# glibc's parts, which stay shared (the MPI plugin is loaded with dlopen), and libgcc_s: the
# one unwinder for exceptions that cross glibc's frames.
allowed = re.compile(r"^(libc|libm|libdl|libpthread|librt|libgcc_s|ld-linux[-\w]*)\.so(\.\d+)*$")
dyn = subprocess.run(["readelf", "-d", servesim], capture_output=True, text=True, check=True)
needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn.stdout)
if not needed:
    failures.append("readelf -d lists no NEEDED library at all: not a dynamic executable?")
for lib in needed:
    if not allowed.match(lib):
        failures.append(f"{servesim} still loads {lib} (only glibc's and libgcc_s may stay shared)")

shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(args, env=None, want=0):
    p = subprocess.run([servesim] + args, capture_output=True, text=True, cwd=src,
                       env=dict(os.environ, **(env or {})), timeout=120)
    if p.returncode != want:
        failures.append(f"servesim {' '.join(args)}: exit {p.returncode}, expected {want}\n"
                        f"{p.stderr[-2000:]}")
    return p


# yaml-cpp, zlib (the operator model's tables are gzipped) and fmt's tables on stdout.
out = os.path.join(work, "run")
p = run(["run", os.path.join(src, "bench/configs/azure-conv-llama3.1-8b-h100.yaml"),
         "--set", "workload.transform.sample_fraction=0.01", "--out", out],
        env={"SERVESIM_LOG": "debug"})
if not re.search(r"throughput\s+[\d.]+ output tokens/s", p.stdout):
    failures.append(f"run: no throughput line in its table:\n{p.stdout[-1500:]}")
if "[servesim] [debug]" not in p.stderr:
    failures.append(f"SERVESIM_LOG=debug: spdlog wrote no debug line on stderr:\n{p.stderr[-1500:]}")
if not os.path.isfile(os.path.join(out, "summary.json")):
    failures.append("run: no summary.json")
# Boost.Program_options' parsing and an exception thrown inside the run, caught at the top.
p = run(["run", "--requests", "not-a-number", "--out", out], want=2)
if "--requests" not in p.stderr:
    failures.append(f"a bad --requests: the message does not name the option:\n{p.stderr}")
p = run(["run", "--set", "scheduler.max_num_seqs=-3", "--out", out], want=2)
if "scheduler.max_num_seqs" not in p.stderr:
    failures.append(f"a bad scheduler.max_num_seqs: the message does not name the key:\n{p.stderr}")

# An exception thrown inside std::call_once (loading the MPI plugin, or refusing a launch of
# several ranks in a build without MPI): caught at the top, exit status 2, not an abort.
p = run(["run", "--out", out], env={"OMPI_COMM_WORLD_SIZE": "2",
                                    "SERVESIM_MPI_PLUGIN": os.path.join(work, "none.so")}, want=2)
if "MPI" not in p.stderr:
    failures.append(f"a launch of 2 ranks with no MPI plugin: no MPI message:\n{p.stderr}")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failure(s); NEEDED: {', '.join(needed)}")
sys.exit(1 if failures else 0)
