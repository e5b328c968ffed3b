#!/usr/bin/env python3
"""plots/plot_results.py on a small fixture: series extraction is right (speedups are ratios of
medians of the same file, skipped runs are not drawn) and the figures are written as valid
PNG and SVG files."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "plots", "plot_results.py")
FIXTURE = os.path.join(HERE, "fixture_results.json")

_spec = importlib.util.spec_from_file_location("plot_results", SCRIPT)
pr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pr)

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False


class Series(unittest.TestCase):
    def setUp(self):
        with open(FIXTURE) as f:
            self.doc = json.load(f)
        self.runs = pr.ok_runs(self.doc)

    def test_skipped_runs_are_excluded(self):
        self.assertEqual(len(self.runs), 18)

    def test_speedup_is_ratio_of_medians(self):
        s = pr.speedup_series(self.runs)
        self.assertEqual(len(s), 6)  # 2 datasets x 3 populations
        case = next(c for c in s if c.startswith("iris") and c.endswith("20"))
        self.assertAlmostEqual(s[case]["cuda"], 0.2 / 0.01)
        self.assertAlmostEqual(s[case]["openmp (threads=2)"], 0.2 / 0.08)

    def test_scaling_picks_the_swept_param(self):
        x, lines = pr.scaling_series(self.runs)
        self.assertEqual(x, "population")
        self.assertEqual(len(lines), 6)  # 3 backends x 2 datasets
        pts = lines["sequential / iris"]
        self.assertEqual([p[0] for p in pts], [10, 20, 40])

    def test_breakdown_keeps_clocks(self):
        b = pr.breakdown_series(self.runs)
        self.assertEqual(len(b), 12)  # sequential and cuda runs carry breakdowns
        keys = {(p, c) for _, ph in b for p, _, c in ph}
        # The same phase name on both clocks stays two series.
        self.assertIn(("coverage", "host"), keys)
        self.assertIn(("coverage", "device"), keys)
        self.assertIn(("coverage", 0.0003 * 10, "device"), [x for _, ph in b for x in ph])

    def test_metric_path(self):
        m = pr.metric_series(self.runs, "metrics.gpops_per_s")
        self.assertEqual(len(m), 6)


@unittest.skipUnless(HAVE_MPL, "matplotlib missing (scripts/install-deps.sh installs python3-matplotlib)")
class Figures(unittest.TestCase):
    def test_writes_png_and_svg(self):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, SCRIPT, FIXTURE, "--out", d, "--metric", "metrics.gpops_per_s"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("skipped", r.stderr)  # the skipped run is reported, not drawn
            for kind in ("time", "speedup", "scaling", "breakdown", "metric"):
                png = os.path.join(d, f"fixture_{kind}.png")
                svg = os.path.join(d, f"fixture_{kind}.svg")
                with open(png, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", kind)
                self.assertGreater(os.path.getsize(png), 5000, kind)
                with open(svg) as f:
                    self.assertIn("<svg", f.read(), kind)

    def test_bad_input_exit_code(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "bad.json")
            with open(p, "w") as f:
                f.write("{not json")
            r = subprocess.run([sys.executable, SCRIPT, p, "--out", d], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("cannot read", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
