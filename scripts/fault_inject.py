#!/usr/bin/python3
"""Fault injection: every subcommand, and the Python module, under the faults of a real machine.

Usage: fault_inject.py SERVESIM [--work DIR] [--seed N] [--full] [--python PY --python-path DIR]

Runs each of run (plain and with --export), capacity, size, report, trace gen, trace stats and
calibrate (and, given --python-path, the Python module) under

  fsize     a file-size limit of 256 bytes (RLIMIT_FSIZE, what `ulimit -f` sets; a full disk or
            a quota fails a write the same way);
  memory    an address-space limit of 40 MiB (RLIMIT_AS; about twice what servesim needs to
            start) with an input that needs more;
  signal    SIGINT, SIGTERM or SIGHUP at a random time (seeded: --seed) while it works;
  readonly  an --out folder it cannot write (chmod 0555; as root, whom permissions do not stop,
            the command runs as the user nobody, or where nobody cannot run the binary, --out is
            a folder under /proc or /sys, which no one can write);

and checks the contract of docs/errors.md#a-full-disk-or-a-file-size-limit: the exit status is
one documented for the case (0 with a whole result; 2 with a message; 128 + N after signal N;
`run` exits 0 on a signal with its summary marked partial), a failure prints a message, and a
failure leaves nothing that looks complete: no marker file (summary.json, capacity.json,
report.html, trace.csv, ...), no temporary, no lock file. A process killed outright fails.

The short form (the default, ctest `fault_injection`) runs one signal per command, about 40
cases, 4 at a time, in well under 30 s on 2 cores; --full runs every signal at three times each.
Exit status 0 when every case keeps the contract, 1 otherwise. System python3, stdlib only.
"""
import argparse
import json
import os
import pathlib
import pwd
import random
import resource
import shutil
import signal
import subprocess
import sys
import time

FSIZE_BYTES = 256
AS_BYTES = 40 << 20
CASE_TIMEOUT_S = 20.0
WORKERS = 4

SMALL = """workload:
  synthetic:
    requests: 3000
    arrival: {kind: fixed, rate_per_s: 200}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: fixed, value: 4}
step_time: {kind: linear, base_ms: 1}
scheduler: {kind: continuous, max_num_seqs: 16}
kv: {policy: paged, capacity_tokens: 10000}
slo: {ttft_ms: 50}
"""
# Never ends in test time: a billion requests, one a millisecond.
LONG = SMALL.replace("requests: 3000", "requests: 1000000000").replace("rate_per_s: 200",
                                                                         "rate_per_s: 1000")
# Far past capacity: the queue grows by a million requests a simulated second.
FLOOD = """workload:
  synthetic:
    requests: 100000000
    arrival: {kind: fixed, rate_per_s: 1000000}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: fixed, value: 10}
step_time: {kind: linear, base_ms: 100}
scheduler: {kind: continuous, max_num_seqs: 4}
kv: {policy: paged, capacity_tokens: 1000}
slo: {ttft_ms: 50}
"""
SWEEP = """base: {base}
slo: {{ttft_ms: 50}}
axes:
  scheduler.max_num_seqs: [4, 8, 16, 32]
"""
STEPS = "batch_size,context_tokens,prefill_tokens,step_ms\n" + "".join(
    f"{b},{b * c},0,{10 + 0.2 * b + 0.001 * b * c:.3f}\n"
    for b in (1, 2, 4, 8, 16, 32, 64) for c in (128, 512, 2048))

# The file whose presence says a command's result is complete (docs/errors.md).
MARKERS = {"run": "summary.json", "export": "summary.json", "capacity": "capacity.json",
           "size": "summary.json", "report": "report.html", "trace-gen": "trace.csv",
           "trace-stats": "trace_stats.json", "calibrate": "step_time.yaml"}


class Case:
    def __init__(self, name, argv, out, marker, fault, **kw):
        self.name, self.argv, self.out, self.marker, self.fault = name, argv, out, marker, fault
        self.sig = kw.get("sig")            # (signal, delay_s) for fault "signal"
        self.user = kw.get("user")          # (uid, gid) to run as, for "readonly" as root
        self.stdout_file = kw.get("stdout_file")
        self.env = kw.get("env")
        self.python = kw.get("python", False)
        self.proc = self.started = None
        self.signalled = False


def limits(case):
    """preexec_fn: the case's limits (run in the child, before exec; no threads here)."""
    def apply():
        os.setsid()  # its own process group: a signal for it reaches nothing else
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # even under nohup
            signal.signal(s, signal.SIG_DFL)
        if case.fault == "fsize" and not case.python:
            resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_BYTES, FSIZE_BYTES))
        if case.fault == "memory" and not case.python:
            resource.setrlimit(resource.RLIMIT_AS, (AS_BYTES, AS_BYTES))
        if case.user:
            os.setgroups([])
            os.setgid(case.user[1])
            os.setuid(case.user[0])
    return apply


def temporaries(out):
    """Temporaries and lock files left in `out` (a folder), as names."""
    if not out.is_dir():
        return []
    return sorted(p.name for p in out.iterdir()
                  if p.name.endswith(".partial") or p.name == ".servesim.lock")


def verdict(case, rc, err, stdout):
    """'' when the case kept the contract, else what it broke."""
    marker = case.out / case.marker if case.marker else None
    has_marker = bool(marker and marker.exists())
    left = temporaries(case.out) if case.out else []
    if case.python:
        return python_verdict(case, rc, err, stdout)
    if rc < 0:
        sig = -rc
        if case.fault == "signal" and sig == case.sig[0] and not has_marker and not left:
            return ""  # the signal came before servesim installed its handlers: nothing written
        return f"killed by signal {sig} ({signal.Signals(sig).name})"
    if left:
        return f"left {left}"
    if rc == 0:
        if case.fault in ("fsize", "readonly") and case.marker:
            return "exit 0 although it could not write"
        if case.marker and not has_marker:
            return f"exit 0 without {case.marker}"
        if case.fault == "signal" and case.name.startswith(("run", "export")):
            s = json.loads(marker.read_text())
            if not (s.get("partial") is True and s.get("stopped_by") == "interrupted"):
                return "run exited 0 on a signal without a summary marked partial, interrupted"
        return ""
    if has_marker:
        return f"exit {rc} but {case.marker} is there, looking complete"
    if case.fault == "signal":
        sig = case.sig[0]
        if rc == 128 + sig and f"interrupted by {signal.Signals(sig).name}" in err:
            return ""
        return f"exit {rc} after {signal.Signals(sig).name}: {err.strip()[:200]!r}"
    if case.fault == "fsize":
        if rc == 2 and "write failed after" in err and "ulimit -f" in err:
            return ""
        if rc == 2 and "standard output failed" in err and case.stdout_file:
            return ""
        return f"exit {rc} without the file-size message: {err.strip()[:200]!r}"
    if case.fault == "memory":
        # Out of memory: exit 3 and a message in plain words (docs/errors.md#memory).
        if rc == 3 and "memory" in err.lower() and "bad_alloc" not in err:
            return ""
        return f"exit {rc} without a message about memory: {err.strip()[:200]!r}"
    if case.fault == "readonly":
        if rc == 2 and "servesim: error: --out" in err:
            return ""
        return f"exit {rc} without a message naming --out: {err.strip()[:200]!r}"
    return f"exit {rc}"


def python_verdict(case, rc, err, stdout):
    if case.fault == "signal":
        sig = case.sig[0]
        if sig == signal.SIGINT and (rc == -signal.SIGINT or "KeyboardInterrupt" in err
                                     or rc == 0):
            return ""  # KeyboardInterrupt, as Ctrl-C in a notebook
        if sig != signal.SIGINT and rc in (0, -sig):
            return ""  # Python's own default: the module writes no file to leave behind
        return f"rc {rc} after {signal.Signals(sig).name}: {err.strip()[-300:]!r}"
    if rc != 0 or "ok" not in stdout.split():
        return f"rc {rc}: {stdout.strip()[-200:]!r} {err.strip()[-300:]!r}"
    return ""


def build_cases(bin_, work, rng, full, python, python_path):
    w = work
    cfg = {n: w / f"{n}.yaml" for n in ("small", "long", "flood")}
    signals = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
    # command name -> (argv for each fault: normal input, input for the memory case, long input
    # for the signal case)
    def out(name):
        return w / "out" / name

    def commands(name, o):
        """argv of command `name` writing into `o`, for each kind of input."""
        b = str(bin_)
        common = ["--out", str(o), "-q", "--no-progress"]
        return {
            "run": {"normal": [b, "run", str(cfg["small"])] + common,
                    "memory": [b, "run", str(cfg["flood"]), "--max-queued", "1000000000"] + common,
                    "long": [b, "run", str(cfg["long"])] + common},
            "export": {"normal": [b, "run", str(cfg["small"]), "--export", "vllm-bench",
                                  "--export", "vidur"] + common,
                       "memory": [b, "run", str(cfg["flood"]), "--max-queued", "1000000000",
                                  "--export", "vllm-bench"] + common,
                       "long": [b, "run", str(cfg["long"]), "--export", "vllm-bench"] + common},
            "capacity": {"normal": [b, "capacity", str(cfg["small"])] + common,
                         "memory": [b, "capacity", str(cfg["flood"])] + common,
                         "long": [b, "capacity", str(cfg["long"])] + common},
            "size": {"normal": [b, "size", str(w / "sweep.yaml"), "--jobs", "1"] + common,
                     "memory": [b, "size", str(w / "sweep-flood.yaml"), "--jobs", "1"] + common,
                     "long": [b, "size", str(w / "sweep-long.yaml"), "--jobs", "2"] + common},
            "report": {"normal": [b, "report", str(w / "result")] + common,
                       "memory": [b, "report", str(w / "result")] + common,
                       "long": [b, "report", str(w / "result")] + common},
            "trace-gen": {"normal": [b, "trace", "gen", str(cfg["small"])] + common,
                          "memory": [b, "trace", "gen", str(cfg["small"])] + common,
                          "long": [b, "trace", "gen", str(cfg["long"])] + common},
            "trace-stats": {"normal": [b, "trace", "stats", str(w / "trace.csv")] + common,
                            "memory": [b, "trace", "stats", str(w / "trace.csv")] + common,
                            "long": [b, "trace", "stats", str(w / "trace.csv")] + common},
            "calibrate": {"normal": [b, "calibrate", str(w / "steps.csv")] + common,
                          "memory": [b, "calibrate", str(w / "steps.csv")] + common,
                          "long": [b, "calibrate", str(w / "steps.csv")] + common},
        }[name]

    cases = []
    readonly = readonly_method(bin_, w)
    for name, marker in MARKERS.items():
        o = out(f"{name}-fsize")
        cases.append(Case(f"{name} fsize", commands(name, o)["normal"], o, marker, "fsize"))
        o = out(f"{name}-memory")
        cases.append(Case(f"{name} memory", commands(name, o)["memory"], o, marker, "memory"))
        for sig in (signals if full else [rng.choice(signals)]):
            for k in range(3 if full else 1):
                o = out(f"{name}-{sig.name}-{k}")
                cases.append(Case(f"{name} {sig.name}", commands(name, o)["long"], o, marker,
                                  "signal", sig=(sig, rng.uniform(0.05, 0.6))))
        o, user = readonly(f"{name}-readonly")
        cases.append(Case(f"{name} readonly", commands(name, o)["normal"], o, marker,
                          "readonly", user=user))
    # What it prints must reach stdout too: a redirection past the limit is an error.
    cases.append(Case("man > file fsize", [str(bin_), "man"], None, None, "fsize",
                      stdout_file=w / "man.txt"))
    if python_path:
        env = dict(os.environ, PYTHONPATH=str(python_path))
        for fault, code in python_cases(w).items():
            sig = (rng.choice(signals), rng.uniform(0.3, 0.8)) if fault == "signal" else None
            cases.append(Case(f"python module {fault}", [python, "-c", code], None, None, fault,
                              sig=sig, env=env, python=True))
    return cases


def python_cases(w):
    small, flood, long_ = (str(w / f"{n}.yaml") for n in ("small", "flood", "long"))
    head = "import resource, signal, sys\nimport servesim\n"
    return {
        # SIGXFSZ is ignored once imported: a write past the limit is an OSError, not a kill.
        "fsize": head + f"""
assert signal.getsignal(signal.SIGXFSZ) == signal.SIG_IGN, signal.getsignal(signal.SIGXFSZ)
r = servesim.run({small!r})
resource.setrlimit(resource.RLIMIT_FSIZE, ({FSIZE_BYTES}, {FSIZE_BYTES}))
try:
    open({str(w / 'py-big.txt')!r}, 'w').write('x' * 10000)
    print('no error past the limit')
except OSError as e:
    print('ok' if e.errno == 27 else e)
""",
        # Out of memory: MemoryError, a Python exception, not a crash.
        "memory": head + f"""
vm = [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmSize')][0] * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (64 << 20), resource.RLIM_INFINITY))
try:
    servesim.run({flood!r}, max_queued=1000000000, request_table=False)
    print('no MemoryError')
except MemoryError:
    print('ok')
""",
        "signal": head + f"""
print('ok', flush=True)
servesim.run({long_!r}, request_table=False)
""",
        # It writes no file: a folder it cannot write is no obstacle.
        "readonly": head + f"""
import os
os.chdir('/proc/self')
r = servesim.run({small!r})
print('ok' if r.summary['finished'] == 3000 else r.summary['finished'])
""",
    }


def readonly_method(bin_, w):
    """A function giving (out folder, user) for a case whose --out cannot be written."""
    if os.geteuid() != 0:
        def plain(name):
            folder = w / "ro" / name
            folder.mkdir(parents=True)
            folder.chmod(0o555)
            return folder, None
        print("fault_inject: readonly: a folder of mode 0555")
        return plain
    nobody = pwd.getpwnam("nobody")
    user = (nobody.pw_uid, nobody.pw_gid)
    # nobody must reach the binary and the inputs (a clone under /root is out of its reach)
    probe = subprocess.run([str(bin_), "trace", "stats", str(w / "trace.csv"), "-q"],
                           capture_output=True,
                           preexec_fn=limits(Case("probe", [], None, None, "", user=user)))
    if probe.returncode == 0:
        print("fault_inject: readonly: running as root, so as the user nobody into a folder of "
              "mode 0555")
        def as_nobody(name):
            folder = w / "ro" / name
            folder.mkdir(parents=True)
            folder.chmod(0o555)
            return folder, user
        return as_nobody
    print("fault_inject: readonly: running as root, and the user nobody cannot run the binary "
          "on the inputs: "
          "--out is a folder under /proc/self and /sys, which no one can write")
    n = [0]
    def system(name):
        n[0] += 1
        return pathlib.Path("/proc/self" if n[0] % 2 else "/sys") / f"servesim-fault-{name}", None
    return system


def prepare(bin_, w):
    w.mkdir(parents=True, exist_ok=True)
    (w / "small.yaml").write_text(SMALL)
    (w / "long.yaml").write_text(LONG)
    (w / "flood.yaml").write_text(FLOOD)
    (w / "sweep.yaml").write_text(SWEEP.format(base="small.yaml"))
    (w / "sweep-flood.yaml").write_text(SWEEP.format(base="flood.yaml"))
    (w / "sweep-long.yaml").write_text(SWEEP.format(base="long.yaml"))
    (w / "steps.csv").write_text(STEPS)
    for argv in ([str(bin_), "run", str(w / "small.yaml"), "--steps", "--out", str(w / "result"),
                  "-q"],
                 [str(bin_), "trace", "gen", str(w / "small.yaml"), "--out", str(w), "-q"]):
        subprocess.run(argv, check=True)
    os.chmod(w, 0o755)
    for p in w.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)


def drain(c):
    """Reads what case c has written to stderr so far."""
    try:
        while chunk := os.read(c.proc.stderr.fileno(), 65536):
            c.err += chunk
    except BlockingIOError:
        pass


def run_cases(cases):
    pending, running, failures = list(cases), [], []
    while pending or running:
        while pending and len(running) < WORKERS:
            c = pending.pop(0)
            c_path = WORK / "logs" / (c.name.replace(" ", "_").replace(">", "") + ".err")
            c.err_path = c_path
            c.out_path = c_path.with_suffix(".out")
            # stdout to a file (the man case's is the file under test); stderr through a pipe,
            # which the file-size limit does not cut, read as it comes (no threads: preexec_fn)
            with open(c.stdout_file or c.out_path, "wb") as stdout:
                c.proc = subprocess.Popen(c.argv, stdout=stdout, stderr=subprocess.PIPE,
                                          stdin=subprocess.DEVNULL, env=c.env,
                                          preexec_fn=limits(c))
            os.set_blocking(c.proc.stderr.fileno(), False)
            c.err = b""
            c.started = time.monotonic()
            running.append(c)
        time.sleep(0.01)
        for c in list(running):
            drain(c)
            elapsed = time.monotonic() - c.started
            if c.sig and not c.signalled and elapsed >= c.sig[1]:
                try:
                    c.proc.send_signal(c.sig[0])
                except ProcessLookupError:
                    pass
                c.signalled = True
            if c.proc.poll() is None:
                if elapsed > CASE_TIMEOUT_S:
                    c.proc.kill()
                    c.proc.wait()
                    failures.append(f"{c.name}: still running after {CASE_TIMEOUT_S:.0f} s")
                    running.remove(c)
                continue
            running.remove(c)
            os.set_blocking(c.proc.stderr.fileno(), True)
            c.err += c.proc.stderr.read()
            c.proc.stderr.close()
            c.err_path.write_bytes(c.err)
            err = c.err.decode(errors="replace")
            out = c.out_path.read_text(errors="replace") if c.out_path.exists() else ""
            why = verdict(c, c.proc.returncode, err, out)
            status = f"rc {c.proc.returncode}"
            if why:
                failures.append(f"{c.name}: {why}")
                print(f"FAIL {c.name} ({status}): {why}")
            else:
                print(f"ok   {c.name} ({status}, {elapsed:.2f} s)")
    return failures


def main():
    global WORK
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("servesim")
    ap.add_argument("--work", default=None, help="scratch folder (default: a new one in /tmp)")
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--full", action="store_true", help="every signal, three times each")
    ap.add_argument("--python", default=sys.executable, help="interpreter of the module")
    ap.add_argument("--python-path", default=None, help="folder holding the servesim module")
    a = ap.parse_args([x for x in sys.argv[1:] if x])  # ctest passes "" for an unbuilt module
    bin_ = pathlib.Path(a.servesim).resolve()
    WORK = pathlib.Path(a.work or f"/tmp/servesim-fault-{os.getpid()}").resolve()
    if WORK.exists():
        for p in WORK.rglob("*"):
            if p.is_dir():
                p.chmod(0o755)
        shutil.rmtree(WORK)
    start = time.monotonic()
    prepare(bin_, WORK)
    (WORK / "logs").mkdir()
    (WORK / "out").mkdir()
    (WORK / "out").chmod(0o777)  # the readonly cases' user may be nobody
    if not a.python_path:
        print("fault_inject: the Python module is not built (no --python-path): its cases are "
              "skipped")
    cases = build_cases(bin_, WORK, random.Random(a.seed), a.full, a.python, a.python_path)
    failures = run_cases(cases)
    took = time.monotonic() - start
    print(f"fault_inject: {len(cases) - len(failures)} of {len(cases)} cases kept the contract "
          f"in {took:.1f} s (seed {a.seed})")
    for f in failures:
        print("  " + f)
    if not failures and not a.work:
        for p in WORK.rglob("*"):
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(WORK, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
