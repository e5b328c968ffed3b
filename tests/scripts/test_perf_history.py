#!/usr/bin/env python3
"""scripts/perf_history.py --check on a throwaway git repository: a GPU run whose headline metric
got worse fails until results/<gpu>/ACCEPTED_REGRESSIONS.md accepts it; CPU baselines and estimated runs are
not gated; a new results/<gpu> folder passes; the accepted-regression rows are parsed strictly. Needs run_experiment ($GPUDM_RUN_EXPERIMENT)."""
import contextlib
import importlib.util
import io
import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("perf_history", os.path.join(ROOT, "scripts", "perf_history.py"))
perf_history = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(perf_history)


def results(rate_gpu, rate_cpu, extra_param=False, estimated=False, device_name="NVIDIA H200"):
    def run(backend, rate, device):
        params = {"population": 10}
        if extra_param:
            params["added_later"] = "x"
        return {"family": "toy", "backend": backend, "dataset": {"name": "iris", "options": {}}, "params": params,
                "seed": 1, "status": "ok", "timing": {"samples": [1.0 / rate] * 3},
                "breakdown": {"kernel": {"seconds": 0.5 / rate, "clock": "device" if device else "host", "calls": 1}},
                "metrics": {"instances_per_s": rate, "estimated": estimated and device}}
    return {"schema_version": 1, "experiment": {"id": "exp", "family": "toy", "config_path": "configs/none.json"},
            "provenance": {"git_sha": "x"}, "environment": {"devices": [{"name": device_name}]},
            "runs": [run("cuda", rate_gpu, True), run("sequential", rate_cpu, False)]}


@unittest.skipIf(perf_history.find_run_experiment() is None, "run_experiment is not built")
class Check(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = self.tmp.name
        for cmd in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"]):
            subprocess.run(["git", "-C", self.repo, *cmd], check=True)
        os.makedirs(os.path.join(self.repo, "results", "h200"))

    def tearDown(self):
        self.tmp.cleanup()

    def commit(self, doc, readme="", gpu="h200"):
        os.makedirs(os.path.join(self.repo, "results", gpu), exist_ok=True)
        with open(os.path.join(self.repo, "results", gpu, "exp.json"), "w") as f:
            json.dump(doc, f)
        with open(os.path.join(self.repo, "results", gpu, "ACCEPTED_REGRESSIONS.md"), "w") as f:
            f.write(readme)
        subprocess.run(["git", "-C", self.repo, "add", "-A"], check=True)
        subprocess.run(["git", "-C", self.repo, "commit", "-qm", "v"], check=True)
        return subprocess.run(["git", "-C", self.repo, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()

    def check(self):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                rc = perf_history.main(["--check", "--root", self.repo])
            except SystemExit as e:
                rc = e.code
        return rc, buf.getvalue()

    def test_regression_fails_until_accepted(self):
        self.commit(results(100.0, 100.0))
        sha = self.commit(results(80.0, 100.0, extra_param=True))  # a param added since: --common-params matches
        rc, out = self.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("cuda on iris", out)
        accept = ("## Accepted regressions\n\n| experiment | commit | backend | dataset | reason |\n|---|---|---|---|---|\n"
                  f"| exp | {sha[:7]} | cuda | ir* | slower on purpose |\n")
        self.commit(results(80.0, 100.0, extra_param=True), accept)
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("slower on purpose", out)

    def test_cpu_baselines_are_not_gated(self):
        self.commit(results(100.0, 100.0))
        self.commit(results(100.0, 50.0))
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("Not gated: 1 CPU-baseline run", out)

    def test_estimated_runs_are_not_gated(self):
        # A GPU run whose time is an estimate (scaled iterations, replayed batches) on either side.
        self.commit(results(100.0, 100.0))
        self.commit(results(50.0, 100.0, estimated=True))
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("Not gated: 1 estimated run", out)
        self.commit(results(25.0, 100.0))  # estimated (old) -> measured (new): still an estimate's comparison
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("Not gated: 2 estimated run", out)

    def test_new_gpu_folder_without_history_passes(self):
        # The first results of another GPU kind (results/h100/, no accepted regressions yet): nothing to compare
        # with, and never against results/h200's versions of the same experiment.
        self.commit(results(100.0, 100.0))
        self.commit(results(10.0, 10.0, device_name="NVIDIA H100 80GB HBM3"), gpu="h100")
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("0 pair(s)", out)
        # Its second version is gated like any other.
        self.commit(results(5.0, 10.0, device_name="NVIDIA H100 80GB HBM3"), gpu="h100")
        rc, out = self.check()
        self.assertEqual(rc, 1, out)

    def test_malformed_accept_row_is_an_error(self):
        self.commit(results(100.0, 100.0), "## Accepted regressions\n\n| exp | notasha | cuda | * | why |\n")
        rc, out = self.check()
        self.assertEqual(rc, 2, out)
        self.assertIn("accepted regression is", out)


class Patterns(unittest.TestCase):
    def test_comma_separated_globs(self):
        self.assertTrue(perf_history.matches("ecoli", "iris,ecoli"))
        self.assertTrue(perf_history.matches("cuda", "*"))
        self.assertFalse(perf_history.matches("openmp", "cuda"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
