#!/usr/bin/env python3
"""scripts/results_index.py: a run_experiment file's commits are its measurements' origins."""
import importlib.util
import os
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("results_index", os.path.join(ROOT, "scripts", "results_index.py"))
ri = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ri)

A, B = "a" * 40, "b" * 40


def run(status, sha=None, day="2026-12-01"):
    r = {"status": status}
    if sha:
        r["provenance"] = {"git_sha": sha, "utc_time": day + "T00:00:00Z"}
    return r


def doc(runs, file_sha=B):
    return {"experiment": {"id": "x", "title": "X"}, "environment": {},
            "provenance": {"git_sha": file_sha, "utc_time": "2026-12-03T00:00:00Z",
                           "previous": [{"git_sha": A, "utc_time": "2026-12-01T00:00:00Z"}]},
            "runs": runs}


class Origins(unittest.TestCase):
    def test_an_invocation_that_only_skipped_is_no_origin(self):
        e = ri.run_experiment_entry(doc([run("ok", A), run("ok", A), run("skipped", B, "2026-12-03")]))
        self.assertEqual(e["commits"], "aaaaaaa")
        self.assertEqual(e["dates"], "2026-12-01")
        self.assertEqual(e["runs"], "3 (1 not run)")

    def test_runs_of_two_commits_name_both(self):
        e = ri.run_experiment_entry(doc([run("ok", A), run("ok", B, "2026-12-03")]))
        self.assertEqual(e["commits"], "aaaaaaa, bbbbbbb")

    def test_runs_without_provenance_name_every_invocation(self):
        e = ri.run_experiment_entry(doc([run("ok"), run("ok")]))
        self.assertEqual(e["commits"], "aaaaaaa, bbbbbbb")


if __name__ == "__main__":
    unittest.main(verbosity=2)
