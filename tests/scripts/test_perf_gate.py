#!/usr/bin/env python3
"""scripts/perf_gate.py on synthetic Google Benchmark JSON: inputs that must pass and must fail.

The statistics are run_experiment --compare's (experiments/compare.cpp, unit-tested in
tests/experiments/test_compare.cpp); these tests check the gate end to end through the real binary
($GPUDM_RUN_EXPERIMENT, set by ctest; skipped when it is not built), and, where scipy is installed
(the GPU machine), that the binary's p-values are scipy's."""
import json
import os
import random
import subprocess
import sys
import tempfile
import contextlib
import importlib.util
import io
import unittest
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GATE = os.path.join(ROOT, "scripts", "perf_gate.py")
_spec = importlib.util.spec_from_file_location("perf_gate", GATE)
perf_gate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(perf_gate)


def run_gate(args, env_extra):
    """perf_gate.main in-process (fast: scipy/gbench imported once) -> (exit code, output)."""
    buf = io.StringIO()
    with mock.patch.dict(os.environ, env_extra), contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            rc = perf_gate.main(list(args))
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
    return rc, buf.getvalue()


def bench_json(path, benchmarks, reps=9, seed=0, aggregates=True):
    """benchmarks: {name: (median_ns, relative_noise)} -> Google Benchmark JSON with repetitions."""
    rng = random.Random(seed)
    out = []
    for name, (t, noise) in benchmarks.items():
        times = [t * (1.0 + rng.uniform(-noise, noise)) for _ in range(reps)]
        for i, v in enumerate(times):
            out.append({"name": name, "run_name": name, "run_type": "iteration", "repetitions": reps,
                        "repetition_index": i, "threads": 1, "iterations": 100, "real_time": v, "cpu_time": v,
                        "time_unit": "ns"})
        if aggregates:
            s = sorted(times)
            out.append({"name": name + "_median", "run_name": name, "run_type": "aggregate", "repetitions": reps,
                        "aggregate_name": "median", "threads": 1, "iterations": reps, "real_time": s[reps // 2],
                        "cpu_time": s[reps // 2], "time_unit": "ns"})
    with open(path, "w") as f:
        json.dump({"context": {"date": "2026-01-01", "num_cpus": 2}, "benchmarks": out}, f)


@unittest.skipIf(perf_gate.find_run_experiment() is None, "run_experiment is not built (set GPUDM_RUN_EXPERIMENT)")
class PerfGate(unittest.TestCase):
    env_extra = {}

    def gate(self, base, new, *args):
        with tempfile.TemporaryDirectory() as d:
            pb, pn = os.path.join(d, "base.json"), os.path.join(d, "new.json")
            bench_json(pb, *base)
            bench_json(pn, *new)
            return run_gate([pb, pn, *args], self.env_extra)

    def test_same_distribution_passes(self):
        rc, out = self.gate(({"BM_a": (1000, 0.05), "BM_b": (5e6, 0.02)}, 9, 1), ({"BM_a": (1000, 0.05), "BM_b": (5e6, 0.02)}, 9, 2))
        self.assertEqual(rc, 0, out)
        self.assertIn("PASS", out)

    def test_large_significant_regression_fails(self):
        rc, out = self.gate(({"BM_a": (1000, 0.02), "BM_b": (2000, 0.02)}, 9, 1), ({"BM_a": (1300, 0.02), "BM_b": (2000, 0.02)}, 9, 2))
        self.assertEqual(rc, 1, out)
        self.assertIn("SLOWER", out)
        self.assertIn("BM_a", out)

    def test_small_significant_slowdown_below_threshold_passes(self):
        rc, out = self.gate(({"BM_a": (1000, 0.01)}, 12, 1), ({"BM_a": (1080, 0.01)}, 12, 2))
        self.assertEqual(rc, 0, out)

    def test_threshold_is_configurable(self):
        rc, out = self.gate(({"BM_a": (1000, 0.01)}, 12, 1), ({"BM_a": (1080, 0.01)}, 12, 2), "--threshold", "0.05")
        self.assertEqual(rc, 1, out)

    def test_improvement_passes(self):
        rc, out = self.gate(({"BM_a": (1000, 0.02)}, 9, 1), ({"BM_a": (500, 0.02)}, 9, 2))
        self.assertEqual(rc, 0, out)

    def test_noisy_difference_is_not_significant(self):
        # The median moves by +50 % but the samples are the same but one: p >> 0.05, no verdict.
        with tempfile.TemporaryDirectory() as d:
            pb, pn = os.path.join(d, "b.json"), os.path.join(d, "n.json")
            for p, mid in ((pb, 1000), (pn, 1500)):
                v = [100, 200, 300, 400, mid, 1600, 1700, 1800, 1900]
                bj = [{"name": "BM_a", "run_name": "BM_a", "run_type": "iteration", "real_time": x, "cpu_time": x,
                       "time_unit": "ns", "iterations": 1} for x in v]
                with open(p, "w") as f:
                    json.dump({"context": {}, "benchmarks": bj}, f)
            rc, out = run_gate([pb, pn, "--report", os.path.join(d, "r.json")], self.env_extra)
            self.assertEqual(rc, 0, out)
            with open(os.path.join(d, "r.json")) as f:
                v = json.load(f)["runs"][0]
            self.assertGreater(v["change"], 0.4)
            self.assertGreater(v["pvalue"], 0.05)
            self.assertEqual(v["verdict"], "ambiguous")

    def test_too_few_repetitions_is_an_input_error(self):
        rc, out = self.gate(({"BM_a": (1000, 0.02)}, 3, 1), ({"BM_a": (2000, 0.02)}, 3, 2))
        self.assertEqual(rc, 2, out)
        self.assertIn("repetitions", out)

    def test_no_common_benchmark_is_an_input_error(self):
        rc, out = self.gate(({"BM_a": (1000, 0.02)}, 9, 1), ({"BM_b": (1000, 0.02)}, 9, 2))
        self.assertEqual(rc, 2, out)

    def test_report_json(self):
        with tempfile.TemporaryDirectory() as d:
            pb, pn, rep = (os.path.join(d, x) for x in ("b.json", "n.json", "r.json"))
            bench_json(pb, {"BM_a": (1000, 0.02)}, 9, 1)
            bench_json(pn, {"BM_a": (1500, 0.02)}, 9, 2)
            rc, out = run_gate([pb, pn, "--report", rep], self.env_extra)
            self.assertEqual(rc, 1, out)
            with open(rep) as f:
                v = json.load(f)["runs"][0]
            self.assertEqual(v["verdict"], "slower")
            self.assertAlmostEqual(v["change"], 0.5, delta=0.05)
            self.assertLess(v["pvalue"], 0.05)


    def test_command_line_exit_codes(self):
        # One real process: the exit status is what CI sees.
        with tempfile.TemporaryDirectory() as d:
            pb, pn = os.path.join(d, "b.json"), os.path.join(d, "n.json")
            bench_json(pb, {"BM_a": (1000, 0.02)}, 9, 1)
            bench_json(pn, {"BM_a": (1500, 0.02)}, 9, 2)
            env = dict(os.environ, **self.env_extra)
            r = subprocess.run([sys.executable, GATE, pb, pn], capture_output=True, text=True, env=env)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            r = subprocess.run([sys.executable, GATE, pb, pb], capture_output=True, text=True, env=env)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            r = subprocess.run([sys.executable, GATE, pb, os.path.join(d, "missing.json")], capture_output=True, text=True, env=env)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)


@unittest.skipIf(perf_gate.find_run_experiment() is None, "run_experiment is not built (set GPUDM_RUN_EXPERIMENT)")
class PerfGateMerge(unittest.TestCase):
    env_extra = {}

    def test_several_files_per_side_are_merged(self):
        # Interleaved rounds: one repetition per file, 9 files per side.
        with tempfile.TemporaryDirectory() as d:
            base, new = [], []
            for i in range(9):
                for side, t, lst in (("b", 1000, base), ("n", 1400, new)):
                    p = os.path.join(d, f"{side}{i}.json")
                    bench_json(p, {"BM_a": (t, 0.02), "BM_b": (500, 0.02)}, 1, seed=100 * i + len(lst) + (side == "n"))
                    lst.append(p)
            rep = os.path.join(d, "r.json")
            rc, out = run_gate(["--base", *base, "--new", *new, "--report", rep], self.env_extra)
            self.assertEqual(rc, 1, out)
            with open(rep) as f:
                runs = {r["label"]: r for r in json.load(f)["runs"]}
            self.assertEqual(runs["BM_a"]["base"]["n"], 9)
            self.assertEqual(runs["BM_a"]["verdict"], "slower")
            self.assertEqual(runs["BM_b"]["verdict"], "same")
            rc, out = run_gate(["--base", *base[:4], "--new", *new[:4]], self.env_extra)
            self.assertEqual(rc, 2, out)  # 4 < 9 repetitions

    def test_min_per_file_keeps_each_files_fastest_repetition(self):
        # 9 files per side, 3 repetitions each; one repetition of every new file is disturbed (+50 %).
        with tempfile.TemporaryDirectory() as d:
            base, new = [], []
            for i in range(9):
                for side, lst in (("b", base), ("n", new)):
                    p = os.path.join(d, f"{side}{i}.json")
                    bench_json(p, {"BM_a": (1000, 0.01)}, 3, seed=10 * i + (side == "n"))
                    if side == "n":
                        with open(p) as f:
                            doc = json.load(f)
                        doc["benchmarks"][0]["real_time"] *= 1.5
                        with open(p, "w") as f:
                            json.dump(doc, f)
                    lst.append(p)
            rep = os.path.join(d, "r.json")
            rc, out = run_gate(["--base", *base, "--new", *new, "--min-per-file", "--report", rep], {})
            self.assertEqual(rc, 0, out)
            self.assertIn("fastest repetition", out)
            with open(rep) as f:
                self.assertEqual(json.load(f)["runs"][0]["new"]["n"], 9)
            rc, out = run_gate(["--base", *base, "--new", *new, "--min-repetitions", "27"], {})
            self.assertEqual(rc, 0, out)  # all 27 repetitions: the disturbed third moves the median little

    def test_missing_binary_is_an_input_error(self):
        with tempfile.TemporaryDirectory() as d:
            pb = os.path.join(d, "b.json")
            bench_json(pb, {"BM_a": (1000, 0.02)}, 9, 1)
            rc, out = run_gate([pb, pb, "--run-experiment", os.path.join(d, "none")], {})
            self.assertEqual(rc, 2, out)
            self.assertIn("run_experiment not found", out)


@unittest.skipIf(perf_gate.find_run_experiment() is None, "run_experiment is not built (set GPUDM_RUN_EXPERIMENT)")
class PValuesAgreeWithScipy(unittest.TestCase):
    """compare.py's statistic is scipy.stats.mannwhitneyu: ours must give the same p-values."""

    def test_against_scipy(self):
        try:
            from scipy.stats import mannwhitneyu
        except ImportError:
            self.skipTest("scipy is not installed here")
        rng = random.Random(7)
        with tempfile.TemporaryDirectory() as d:
            for reps, shift in ((5, 1.3), (9, 1.0), (9, 1.1), (12, 1.05)):
                pb, pn, rep = (os.path.join(d, x) for x in ("b.json", "n.json", "r.json"))
                bench_json(pb, {"BM_a": (1000, 0.05)}, reps, rng.randrange(1000))
                bench_json(pn, {"BM_a": (1000 * shift, 0.05)}, reps, rng.randrange(1000))
                run_gate([pb, pn, "--min-repetitions", "2", "--report", rep], {})
                with open(rep) as f:
                    r = json.load(f)["runs"][0]
                with open(pb) as f:
                    a = [b["real_time"] for b in json.load(f)["benchmarks"] if b["run_type"] == "iteration"]
                with open(pn) as f:
                    b = [x["real_time"] for x in json.load(f)["benchmarks"] if x["run_type"] == "iteration"]
                self.assertAlmostEqual(r["pvalue"], float(mannwhitneyu(a, b, alternative="two-sided").pvalue), places=9)


if __name__ == "__main__":
    unittest.main(verbosity=2)
