#!/usr/bin/env python3
"""The Python module (docs/python.md) against the command line it shares its library with.

Usage: test_module.py SERVESIM_BINARY SOURCE_DIR WORK_DIR, with the module's folder on
PYTHONPATH (ctest sets it: python/CMakeLists.txt). Each check runs the same scenario through
`servesim` and through the module and compares what they give: summary.json, requests.csv,
steps.csv, a sweep's summary.json and points.csv, capacity.json, and the messages of bad input.
Plain asserts; exit status 0 when every check passes.
"""
import contextlib
import csv
import io
import json
import math
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import unittest
import warnings

import numpy as np

import servesim

BINARY, SOURCE, WORK = (pathlib.Path(a).resolve() for a in sys.argv[1:4])

# configs/default.yaml written as a dict by hand (not through servesim.load_config), so the dict
# path is checked against the file, not against itself.
DEFAULT_DICT = {
    "workload": {"synthetic": {
        "requests": 200,
        "arrival": {"kind": "poisson", "rate_per_s": 2.7},
        "prompt_tokens": {"kind": "uniform", "min": 16, "max": 64},
        "output_tokens": {"kind": "uniform", "min": 8, "max": 256}}},
    "step_time": {"kind": "table", "points": [{"batch": 1, "ms": 6.3}, {"batch": 8, "ms": 9.3}],
                  "prefill_ms_per_token": 0.25},
    "scheduler": {"kind": "continuous", "max_num_seqs": 8, "max_num_batched_tokens": 2048,
                  "chunked_prefill": False},
    "kv": {"policy": "paged", "capacity_tokens": 100000, "block_size": 16},
    "seed": 1,
}
SLO = "slo={ttft_ms: 100, tpot_ms: 15}"


def cli(*args, ok=True):
    """Runs servesim from the source folder; (exit status, stdout, stderr)."""
    p = subprocess.run([str(BINARY), *args], cwd=SOURCE, capture_output=True, text=True,
                       timeout=120)
    if ok:
        assert p.returncode == 0, f"servesim {' '.join(args)}: {p.returncode}\n{p.stderr}"
    return p.returncode, p.stdout, p.stderr


def cli_run(name, *args):
    """`servesim run ARGS --steps --out WORK/name`: (summary, requests rows, steps rows)."""
    out = WORK / name
    cli("run", *args, "--steps", "-q", "--out", str(out))
    with open(out / "requests.csv", newline="") as f:
        requests = list(csv.DictReader(f))
    with open(out / "steps.csv", newline="") as f:
        steps = list(csv.DictReader(f))
    return json.loads((out / "summary.json").read_text()), requests, steps


def same_column(array, texts):
    """A module column equals the CSV's texts: numbers to the last digit, text exactly."""
    assert len(array) == len(texts), (len(array), len(texts))
    if array.dtype.kind in "biuf":
        for a, t in zip(array.tolist(), texts):
            if t == "":
                assert math.isnan(a), (a, t)
            elif t in ("true", "false"):
                assert a == (t == "true"), (a, t)
            else:
                assert a == float(t), (a, t)
    else:
        assert array.tolist() == texts


class Run(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.chdir(SOURCE)  # the configs' relative paths, as from the repository root
        cls.cli_summary, cls.cli_requests, cls.cli_steps = cli_run("default")

    def test_default_scenario_matches_the_cli(self):
        r = servesim.run()
        self.assertEqual(r.summary, self.cli_summary)
        self.assertTrue(r.table.startswith("requests   200 finished"))
        self.assertEqual(r.notes, [])

    def test_summary_carries_energy_on_a_catalogue_chip(self):
        r = servesim.run("configs/examples/roofline-llama-3.1-8b-h100.yaml", request_table=False,
                         steps=False)
        e = r.summary["energy"]
        self.assertEqual(e["accelerators"], 1)
        self.assertAlmostEqual(e["output_tokens_per_joule"] * e["joules"],
                               r.summary["output_tokens"], delta=1e-6 * r.summary["output_tokens"])
        self.assertIn("energy ", r.table)
        self.assertNotIn("energy", servesim.run(request_table=False, steps=False).summary)

    def test_file_and_dict_give_the_cli_summary(self):
        from_file = servesim.run("configs/default.yaml")
        from_path = servesim.run(pathlib.Path("configs/default.yaml"))
        from_dict = servesim.run(DEFAULT_DICT)
        self.assertEqual(from_file.summary, self.cli_summary)
        self.assertEqual(from_path.summary, self.cli_summary)
        self.assertEqual(from_dict.summary, self.cli_summary)
        self.assertEqual(servesim.load_config("configs/default.yaml"), DEFAULT_DICT)
        self.assertEqual(servesim.load_config(), DEFAULT_DICT)

    def test_requests_and_steps_are_the_csv_columns(self):
        r = servesim.run(DEFAULT_DICT)
        self.assertEqual(list(r.requests), list(self.cli_requests[0]))
        self.assertEqual(list(r.steps), list(self.cli_steps[0]))
        for name, array in r.requests.items():
            self.assertEqual(len(array), r.summary["requests"], name)
            same_column(array, [row[name] for row in self.cli_requests])
        for name, array in r.steps.items():
            self.assertEqual(len(array), r.summary["steps"], name)
            same_column(array, [row[name] for row in self.cli_steps])
        self.assertEqual(r.requests["id"].dtype, np.int64)
        self.assertEqual(r.requests["ttft_s"].dtype, np.float64)
        self.assertEqual(r.requests["status"].dtype.kind, "U")
        self.assertAlmostEqual(float(np.percentile(r.requests["ttft_s"], 50)),
                               r.summary["ttft_s"]["p50"], places=12)
        quiet = servesim.run(request_table=False, steps=False)
        self.assertIsNone(quiet.requests)
        self.assertIsNone(quiet.steps)
        self.assertEqual(quiet.summary, self.cli_summary)

    def test_summary_carries_itl(self):
        """summary.json's itl_s (docs/metrics.md#inter-token-latency-itl) comes through as is,
        per class too, and slo.itl_ms checks it; the CLI's --percentiles ITL row agrees."""
        r = servesim.run(DEFAULT_DICT, {"slo": {"itl_ms": 12}})
        itl = r.summary["itl_s"]
        self.assertEqual(itl, self.cli_summary["itl_s"])
        for k in ("count", "mean", "median", "std", "p50", "p90", "p99", "max", "exact"):
            self.assertIn(k, itl)
        tokens = sum(r.requests["output_tokens"]) - r.summary["finished"]
        self.assertEqual(itl["count"], tokens)
        self.assertEqual(itl["median"], itl["p50"])
        self.assertLessEqual(itl["p50"], itl["p99"])
        self.assertEqual(r.summary["slo"]["itl"]["target_ms"], 12)
        self.assertEqual(r.summary["slo"]["itl"]["met"],
                         r.summary["slo"]["itl"]["percentile_ms"] <= 12)
        self.assertIn("ITL p99", r.table)
        _, out, _ = cli("run", "--no-progress", "--out", str(WORK / "pct"),
                        "--percentiles", "50,99")
        # The last ITL row: the --percentiles table's (count mean median std p50 p99), below
        # the summary table's.
        row = [line.split() for line in out.splitlines() if line.startswith("ITL ")][-1]
        self.assertEqual(int(row[1]), itl["count"])
        self.assertAlmostEqual(float(row[2]), itl["mean"] * 1e3, delta=1e-3)
        self.assertAlmostEqual(float(row[4]), itl["std"] * 1e3, delta=1e-3)
        self.assertAlmostEqual(float(row[6]), itl["p99"] * 1e3, delta=1e-3)
        pct = json.loads((WORK / "pct" / "summary.json").read_text())["itl_s"]["percentiles"]
        self.assertAlmostEqual(pct["p99"], itl["p99"], places=15)

    def test_api_gives_the_engine_ttft_beside_the_clients(self):
        """With an api section (docs/metrics.md#time-outside-the-engine-api) the summary has
        server_ttft_s, requests have a server_ttft_s column, and the table a server TTFT row,
        as the CLI gives them; without it the column equals ttft_s."""
        api = ["api.engine=vllm-0.19", "api.response_overhead_ms=1"]
        want, rows, _ = cli_run("api", *(a for kv in api for a in ("--set", kv)))
        r = servesim.run(DEFAULT_DICT, api)
        self.assertEqual(r.summary, want)
        self.assertIn("server_ttft_s", r.summary)
        self.assertLess(r.summary["server_ttft_s"]["p50"], r.summary["ttft_s"]["p50"])
        same_column(r.requests["server_ttft_s"], [row["server_ttft_s"] for row in rows])
        self.assertIn("server TTFT", r.table)
        plain = servesim.run(DEFAULT_DICT)
        self.assertNotIn("server_ttft_s", plain.summary)
        self.assertEqual(plain.requests["server_ttft_s"].tolist(),
                         plain.requests["ttft_s"].tolist())
        # The vllm-0.15 preset: the client's TTFT is the engine's plus tokenization and the
        # measured 5 ms on the way back, request by request.
        http = servesim.run(DEFAULT_DICT,
                            ["api.engine=vllm-0.15", "api.tokenize_ms_per_1k_tokens=0"])
        gaps = http.requests["ttft_s"] - http.requests["server_ttft_s"]
        self.assertAlmostEqual(float(gaps.min()), 0.005, places=9)
        self.assertAlmostEqual(float(gaps.max()), 0.005, places=9)

    def test_speculative_results_come_through(self):
        """With a speculative section (docs/speculative.md) the summary has its block and the
        table its speculate line, as the CLI gives them; without it neither."""
        spec = {"scheduler": {"kind": "vllm", "enable_prefix_caching": False},
                "speculative": {"method": "ngram", "k": 3, "acceptance": {"rate": 0.7}}}
        r = servesim.run(DEFAULT_DICT, spec)
        s = r.summary["speculative"]
        self.assertEqual((s["method"], s["k"]), ("ngram", 3))
        self.assertEqual(s["tokens_per_verify"],
                         (s["accepted_tokens"] + s["verifies"]) / s["verifies"])
        self.assertIn("speculate  ngram k=3", r.table)
        self.assertNotIn("speculative", servesim.run(DEFAULT_DICT).summary)

    def test_admission_and_abandonment_statuses_come_through(self):
        """With admission and abandonment (docs/schedulers.md#admission-and-abandonment) the
        summary counts every status, the status column agrees, and the table has its ended line;
        without them the summary has no by_status."""
        r = servesim.run("configs/examples/abandonment-azure-conv-llama70b-h100.yaml")
        b = r.summary["by_status"]
        self.assertEqual(sum(b.values()), r.summary["requests"])
        statuses = list(r.requests["status"])
        for k in ("finished", "timed_out", "cancelled"):
            self.assertEqual(statuses.count(k), b[k], k)
        self.assertGreater(b["timed_out"], 0)
        self.assertIn("ended      0 refused by admission, 0 shed", r.table)
        self.assertEqual(len(r.requests["tenant"]), r.summary["requests"])
        self.assertNotIn("by_status", servesim.run(DEFAULT_DICT).summary)

    def test_lora_results_come_through(self):
        """With a lora section (docs/lora.md) the summary has its block and the table its lora
        line; without it neither."""
        lora = {"lora": {"adapters": 8, "popularity": {"kind": "zipf", "alpha": 1.0},
                         "max_loras": 2, "adapter_bytes": 1.0e8, "peak_tflops": 100,
                         "peak_memory_gbps": 1000}}
        r = servesim.run(DEFAULT_DICT, lora)
        s = r.summary["lora"]
        self.assertEqual((s["adapters"], s["max_loras"]), (8, 2))
        self.assertEqual(s["requests_with_adapter"], r.summary["requests"])
        self.assertGreater(s["gpu_slot_misses"], 0)
        self.assertIn("lora       8 adapters", r.table)
        self.assertNotIn("lora", servesim.run(DEFAULT_DICT).summary)

    def test_pipeline_bubble_comes_through(self):
        """With pipeline_parallel > 1 (docs/parallelism.md) the summary has its pipeline block
        and the table its pipeline line, for either schedule; with one stage neither."""
        e = "configs/examples/roofline-llama-3.1-8b-h100.yaml"
        for schedule in ("closed_form", "micro_batches"):
            r = servesim.run(e, {"step_time.pipeline_parallel": 2,
                                 "step_time.pipeline_schedule": schedule},
                             request_table=False, steps=False)
            p = r.summary["pipeline"]
            self.assertEqual((p["schedule"], p["stages"]), (schedule, 2))
            self.assertEqual(len(p["stage_busy"]), 2)
            self.assertTrue(0 <= p["bubble"] < 1, p)
            self.assertIn(f"pipeline   2 stages ({schedule}): bubble", r.table)
        self.assertNotIn("pipeline", servesim.run(e, request_table=False, steps=False).summary)

    def test_overrides_and_seed_match_set_and_seed(self):
        want, _, _ = cli_run("set", "--set", "scheduler.max_num_seqs=4", "--seed", "7")
        for overrides in (["scheduler.max_num_seqs=4"], ("scheduler.max_num_seqs=4",),
                          "scheduler.max_num_seqs=4", {"scheduler.max_num_seqs": 4}):
            got = servesim.run(DEFAULT_DICT, overrides, seed=7)
            self.assertEqual(got.summary, want, overrides)
        self.assertEqual(servesim.run(DEFAULT_DICT, ["scheduler.max_num_seqs=4"],
                                      seed=np.int64(7)).summary, want)
        self.assertEqual(want["config"]["scheduler"]["max_num_seqs"], 4)
        self.assertEqual(want["seed"], 7)
        self.assertNotEqual(want["ttft_s"], self.cli_summary["ttft_s"])
        # A whole section, and a kind switch that drops the old kind's keys with a note.
        section = servesim.run(None, {"scheduler": {"kind": "static", "max_batch_size": 8}})
        self.assertEqual(section.summary["config"]["scheduler"],
                         {"kind": "static", "max_batch_size": 8})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            switched = servesim.run(None, ["scheduler.kind=static", "scheduler.max_batch_size=8"])
        self.assertTrue(switched.notes and "dropped scheduler.max_num_seqs" in switched.notes[0],
                        switched.notes)
        self.assertTrue(any("servesim: note:" in str(w.message) for w in caught))

    def test_bad_input_raises_the_cli_message(self):
        status, _, err = cli("run", "--set", "scheduler.max_num_seq=4", "-q", "--out",
                             str(WORK / "bad"), ok=False)
        self.assertEqual(status, 2)
        cli_message = err.strip().removeprefix("servesim: error: ")
        with self.assertRaises(ValueError) as e:
            servesim.run(None, ["scheduler.max_num_seq=4"])
        self.assertEqual(str(e.exception), cli_message)
        self.assertIn("scheduler.max_num_seq", cli_message)
        # In a dict: the key, <dict> and a line of to_yaml()'s text.
        bad = json.loads(json.dumps(DEFAULT_DICT))
        bad["scheduler"]["max_num_seq"] = 4
        with self.assertRaises(ValueError) as e:
            servesim.run(bad)
        self.assertIn("scheduler.max_num_seq at <dict>:", str(e.exception))
        self.assertIn("did you mean max_num_seqs?", str(e.exception))
        line = int(str(e.exception).split("<dict>:")[1].split(":")[0])
        self.assertIn("max_num_seq:", servesim.to_yaml(bad).splitlines()[line - 1])
        for call, words in [
                (lambda: servesim.run("no/such/file.yaml"), "no/such/file.yaml: cannot open"),
                (lambda: servesim.run(42), "config: expected a path"),
                (lambda: servesim.run(None, ["novalue"]), "--set novalue: expected key.path=value"),
                (lambda: servesim.run(None, [3]), "each override is a \"key=value\" str"),
                (lambda: servesim.run(None, seed=-1), "seed: expected an integer"),
                (lambda: servesim.run({"seed": object()}), "<dict>: seed: a value of type object cannot"),
                (lambda: servesim.run({1: 2}), "keys must be strings"),
                (lambda: servesim.run(max_queued=0), "max_queued: 0 is out of range"),
                (lambda: servesim.capacity(None, [SLO], max_sim_time=0),
                 "max_sim_time: 0 is out of range"),
                (lambda: servesim.sweep("configs/sweeps/sizing-small.yaml", max_wall_time=-1),
                 "max_wall_time: -1 is out of range"),
                (lambda: servesim.sweep("configs/sweeps/sizing-small.yaml", max_queued=0),
                 "max_queued: 0 is out of range"),
                (lambda: servesim.capacity(None), "capacity needs an slo section"),
                (lambda: servesim.sweep({"base": "nope.yaml"}), "no such base scenario")]:
            with self.assertRaises(ValueError) as e:
                call()
            self.assertIn(words, str(e.exception))

    def test_percentiles_match_the_cli(self):
        _, out, _ = cli("run", "--percentiles", "50,90,99.9", "--json", "--out",
                        str(WORK / "percentiles-json"))
        want = json.loads(out)["latency_s"]
        want_summary = json.loads(out)["summary"]
        self.assertEqual(list(want), ["ttft", "tpot", "itl", "e2e"])
        self.assertEqual(list(want["itl"]["percentiles"]), ["p50", "p90", "p99.9"])
        for given in ([50, 90, 99.9], (50.0, np.int64(90), np.float64(99.9)), "50,90,99.9"):
            r = servesim.run(percentiles=given, request_table=False, steps=False)
            self.assertEqual(r.latency_s, want, given)
        # summary.json's ITL gains the percentiles, as on the command line; nothing else moves.
        self.assertEqual(r.summary, want_summary)
        self.assertIn("percentiles", r.summary["itl_s"])
        del want_summary["itl_s"]["percentiles"]
        self.assertEqual(want_summary, self.cli_summary)
        self.assertIsNone(servesim.run(request_table=False, steps=False).latency_s)
        # The table ends with the one `servesim run --percentiles` prints after its summary.
        _, text, _ = cli("run", "--percentiles", "50,90,99.9", "--out", str(WORK / "percentiles"))
        latency = text[text.index("\nwrote "):].split("\n\n", 1)[1]
        self.assertIn("ITL", latency)
        self.assertTrue(r.table.endswith("\n" + latency), (r.table, latency))
        self.assertTrue(r.table.startswith(servesim.run(steps=False).table))
        for bad, words in [([120], '"120" is not a percentile'), ([], "an empty list"),
                           ("50,,99", '"" is not a percentile'), ([True], '"True" is a bool'),
                           (["50"], "'50'\" is a str"), (99, "expected a list of numbers"),
                           ([float("nan")], "is not a percentile")]:
            with self.assertRaises(ValueError) as e:
                servesim.run(percentiles=bad, request_table=False, steps=False)
            self.assertIn("percentiles", str(e.exception))
            self.assertIn(words, str(e.exception))

    def test_requests_is_the_cli_count(self):
        """requests=N is `--requests N`; a bool is the old request_table, with a warning."""
        _, out, _ = cli("run", "--requests", "50", "--json", "--out", str(WORK / "requests-50"))
        want = json.loads(out)["summary"]
        self.assertEqual(want["requests"], 50)
        for n in (50, np.int64(50)):
            r = servesim.run(requests=n, steps=False)
            self.assertEqual(r.summary, want)
            self.assertEqual(len(r.requests["id"]), 50)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            old = servesim.run(requests=False, steps=False)
        self.assertIsNone(old.requests)
        self.assertEqual(old.summary, self.cli_summary)  # not a count: the default's 200
        self.assertEqual([w.category for w in caught], [DeprecationWarning])
        self.assertIn("request_table", str(caught[0].message))
        for call, words in [
                (lambda: servesim.run(requests=True, request_table=False), "give request_table"),
                (lambda: servesim.run(requests=0), "requests: 0 is out of range"),
                (lambda: servesim.run(requests="5"), "requests: expected the synthetic"),
                (lambda: servesim.run("configs/examples/tiny-trace.yaml", requests=5),
                 "has no workload.synthetic to override"),
                (lambda: servesim.sweep("configs/sweeps/sizing-small.yaml", requests=-2),
                 "out of range")]:
            with self.assertRaises(ValueError) as e:
                call()
            self.assertIn(words, str(e.exception))

    def test_export_matches_the_cli(self):
        out = WORK / "export"
        cli("run", "--percentiles", "50,99", "--export", "vllm-bench", "--export", "vidur", "-q",
            "--out", str(out))
        r = servesim.run(percentiles=[50, 99], export=["vllm-bench", "vidur", "vllm-bench"],
                         steps=False)
        self.assertEqual(list(r.exports), ["vllm-bench", "vidur"])
        self.assertEqual(r.exports["vllm-bench"], (out / "vllm-bench.json").read_text())
        self.assertEqual(r.exports["vidur"], (out / "request_metrics.csv").read_text())
        self.assertEqual(servesim.run(steps=False).exports, {})
        with self.assertRaises(ValueError) as e:
            servesim.run(export="genai")
        self.assertIn('export "genai": unknown format (valid: genai-perf, vidur, vllm-bench)',
                      str(e.exception))

    def test_missing_numpy_is_named(self):
        """Without numpy (here hidden from a fresh interpreter), `import servesim` says what to
        install instead of pybind11's 'initialization failed'; a numpy that fails to import is
        named with its own error."""
        for hide, words in [
                ('sys.modules["numpy"] = None',
                 "servesim needs numpy: pip install numpy, or apt-get install python3-numpy"),
                ("class Broken:\n"
                 "    def find_spec(self, name, path=None, target=None):\n"
                 "        if name == 'numpy': raise ImportError('numpy is broken here')\n"
                 "sys.meta_path.insert(0, Broken())",
                 "cannot import: ImportError: numpy is broken here")]:
            code = f"import sys\n{hide}\nimport servesim\n"
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=60)
            self.assertNotEqual(p.returncode, 0)
            last = p.stderr.strip().splitlines()[-1]
            self.assertTrue(last.startswith("ImportError: servesim needs numpy"), p.stderr)
            self.assertIn(words, last)
            self.assertIn(sys.executable, last)
            self.assertNotIn("initialization failed", p.stderr)

    def test_dataframes_need_pandas(self):
        r = servesim.run(steps=False)
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaises(ImportError) as e:
                r.requests_df()
            self.assertIn("pandas", str(e.exception))
        else:
            self.assertEqual(r.requests_df().shape, (200, len(r.requests)))
        with self.assertRaises(ValueError):
            r.steps_df()

    def test_readme_one_liner(self):
        lines = [ln for ln in (SOURCE / "README.md").read_text().splitlines()
                 if ln.startswith("PYTHONPATH=build/python python3 -c ")]
        self.assertEqual(len(lines), 1, "README.md: one `PYTHONPATH=build/python python3 -c` line")
        argv = shlex.split(lines[0].removeprefix("PYTHONPATH=build/python "))
        env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
        p = subprocess.run([sys.executable, *argv[1:]], cwd=SOURCE, env=env, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("requests   200 finished, 0 rejected", p.stdout)


    def test_docs_worked_example(self):
        """Each ```python cell of docs/python.md, run in order in one namespace, prints the
        block that follows it."""
        text = (SOURCE / "docs" / "python.md").read_text()
        cells = re.findall(r"```python\n(.*?)```\n+(?:```\n(.*?)```)?", text, re.S)
        self.assertGreater(len(cells), 5)
        namespace = {}
        for code, want in cells:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(code, namespace)  # noqa: S102 (the documentation's own code)
            self.assertEqual(out.getvalue().strip(), want.strip(), code)


class Memory(unittest.TestCase):
    """Memory as a limit (docs/errors.md#memory): MemoryError in plain words with the Python
    options that bound a run, before the run or during it. Each case runs in a child process
    under an address-space limit, so that the limit never touches this one."""

    def limited(self, code):
        child = (
            "import resource, servesim\n"
            "def vm():\n"
            "    for line in open('/proc/self/status'):\n"
            "        if line.startswith('VmSize:'):\n"
            "            return int(line.split()[1]) * 1024\n"
            "def overload(n):\n"
            "    return {'workload': {'synthetic': {'requests': n,\n"
            "        'arrival': {'kind': 'poisson', 'rate_per_s': 100000},\n"
            "        'prompt_tokens': {'kind': 'fixed', 'value': 10},\n"
            "        'output_tokens': {'kind': 'fixed', 'value': 5}}},\n"
            "        'step_time': {'kind': 'linear', 'base_ms': 1},\n"
            "        'scheduler': {'kind': 'continuous', 'max_num_seqs': 8},\n"
            "        'kv': {'policy': 'paged', 'capacity_tokens': 1000}}\n"
            "try:\n" + "".join("    " + line + "\n" for line in code.splitlines()) +
            "    print('no error')\n"
            "except MemoryError as e:\n"
            "    print('MemoryError:', e)\n")
        r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                           timeout=100)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_a_run_that_cannot_fit_is_refused_before_it_starts(self):
        # 20 million kept rows need about 9.7 GiB: above a 4 GiB limit, refused at once.
        out = self.limited("resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
                           "servesim.run(overload(20_000_000))")
        self.assertIn("MemoryError: not enough memory: a run of 20000000 requests needs at "
                      "least 9.7 GiB", out)
        self.assertIn("max_queued=", out)
        self.assertIn("keep fewer rows in memory (request_table=False, steps=False)", out)

    def test_memory_that_runs_out_during_a_run_is_a_memory_error(self):
        # An overload holding 600,000 requests needs about 350 MiB more than the process has:
        # the limit leaves it 150 MiB.
        out = self.limited("lim = vm() + (150 << 20)\n"
                           "resource.setrlimit(resource.RLIMIT_AS, (lim, lim))\n"
                           "servesim.run(overload(600_000), request_table=False, steps=False)")
        self.assertIn("MemoryError: out of memory: the run needed more memory than it could get "
                      "(the address-space limit (ulimit -v) of", out)
        self.assertIn("bound the requests held at once with max_queued=", out)
        self.assertNotIn("std::bad_alloc", out)


class Sizing(unittest.TestCase):
    def test_sweep_matches_size(self):
        out = WORK / "size"
        cli("size", "configs/sweeps/sizing-small.yaml", "-q", "--jobs", "2", "--out", str(out))
        r = servesim.sweep("configs/sweeps/sizing-small.yaml", jobs=2)
        self.assertEqual(r.summary, json.loads((out / "summary.json").read_text()))
        with open(out / "points.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(list(r.points), list(rows[0]))
        for name, array in r.points.items():
            same_column(array, [row[name] for row in rows])
        self.assertEqual(len(r.points["point"]), 6)
        self.assertEqual(r.points["meets_slo"].dtype, np.bool_)
        self.assertIn("cheapest", r.report)

    def test_sweep_seed_is_the_base_scenarios(self):
        out = WORK / "size-seed"
        cli("size", "configs/sweeps/sizing-small.yaml", "--set", "seed=7", "-q", "--jobs", "2",
            "--out", str(out))
        want = json.loads((out / "summary.json").read_text())
        r = servesim.sweep("configs/sweeps/sizing-small.yaml", seed=7, jobs=2)
        self.assertEqual(r.summary, want)
        self.assertNotEqual(r.summary, servesim.sweep("configs/sweeps/sizing-small.yaml",
                                                      jobs=2).summary)
        # The run limits reach every point's runs: stopped at 5 simulated seconds, none of
        # them is a whole run, and a partial run meets no SLO (as `size --max-sim-time 5`).
        cut = servesim.sweep("configs/sweeps/sizing-small.yaml", jobs=2, max_sim_time=5)
        self.assertTrue(r.points["meets_slo"].any())
        self.assertFalse(cut.points["meets_slo"].any())
        self.assertFalse(servesim.capacity(None, [SLO], max_sim_time=5).found)
        with self.assertRaises(ValueError) as e:
            servesim.sweep("configs/sweeps/sizing-small.yaml", seed=-1)
        self.assertIn("seed: expected an integer", str(e.exception))

    def test_capacity_matches_capacity(self):
        out = WORK / "capacity"
        cli("capacity", "configs/default.yaml", "--set", SLO, "-q", "--out", str(out))
        r = servesim.capacity("configs/default.yaml", [SLO])
        want = json.loads((out / "capacity.json").read_text())
        self.assertEqual(r.summary, want)
        self.assertEqual(r.run_summary, json.loads((out / "summary.json").read_text()))
        self.assertTrue(r.found)
        self.assertEqual(r.probes["rate_scale"].tolist(),
                         [p["rate_scale"] for p in want["probes"]])
        self.assertEqual(r.probes["meets_slo"].dtype, np.bool_)
        from_dict = servesim.capacity(dict(DEFAULT_DICT, slo={"ttft_ms": 100, "tpot_ms": 15}))
        self.assertEqual(from_dict.summary["config"], "<dict>")
        self.assertEqual(from_dict.summary["capacity"], want["capacity"])
        self.assertIsNone(r.latency_s)
        self.assertEqual(r.exports, {})

    def test_capacity_percentiles_and_exports_match_capacity(self):
        out = WORK / "capacity-exports"
        _, text, _ = cli("capacity", "configs/default.yaml", "--set", SLO, "--requests", "100",
                         "--percentiles", "50,99", "--export", "vllm-bench", "--json", "--out",
                         str(out))
        want = json.loads(text)
        r = servesim.capacity("configs/default.yaml", [SLO], requests=100,
                              percentiles="50,99", export="vllm-bench")
        self.assertEqual(r.summary, want["capacity"])
        self.assertEqual(r.latency_s, want["latency_s"])
        self.assertEqual(r.run_summary, json.loads((out / "summary.json").read_text()))
        self.assertEqual(r.exports, {"vllm-bench": (out / "vllm-bench.json").read_text()})

    def test_sweep_percentiles_and_exports_match_size(self):
        out = WORK / "size-exports"
        cli("size", "configs/sweeps/sizing-small.yaml", "-q", "--jobs", "2", "--percentiles",
            "50,99.9", "--export", "genai-perf", "--out", str(out))
        r = servesim.sweep("configs/sweeps/sizing-small.yaml", jobs=2, percentiles=[50, 99.9],
                           export="genai-perf")
        self.assertEqual(r.summary, json.loads((out / "summary.json").read_text()))
        with open(out / "points.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(list(r.points), list(rows[0]))
        self.assertEqual(list(r.points)[-2:], ["p50_e2e_ms", "p99.9_e2e_ms"])
        for name, array in r.points.items():
            same_column(array, [row[name] for row in rows])
        cheapest = [int(p) for p in r.points["point"][r.points["cheapest"]]]
        self.assertTrue(cheapest)
        self.assertEqual(sorted(r.exports), cheapest)
        for p in cheapest:
            self.assertEqual(r.exports[p]["genai-perf"],
                             (out / f"point-{p}.profile_export_genai_perf.json").read_text())


if __name__ == "__main__":
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    unittest.main(argv=sys.argv[:1], verbosity=2)
