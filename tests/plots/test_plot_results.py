#!/usr/bin/env python3
"""plots/plot_results.py on a small fixture: series extraction is right (speedups are ratios of
medians of the same file, skipped runs are not drawn) and the figures are written as valid
PNG and SVG files. The shared estimated-value helpers: a run's metrics.estimated flag follows its
values into derived ratios, the --data output and the CSV "estimated" column (true/false), and a
figure gets one legend entry for hollow (estimated) points.

  /usr/bin/python3 tests/plots/test_plot_results.py   (the figure tests skip without matplotlib)"""
import copy
import csv
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
# The figure scripts import plot_results from beside themselves.
sys.path.insert(0, os.path.dirname(SCRIPT))
import gmt_figures  # noqa: E402
import pitt_figures  # noqa: E402

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


def fixture_with_estimates():
    """The fixture with iris population 20's sequential run and poker_full population 40's cuda run estimated."""
    with open(FIXTURE) as f:
        doc = json.load(f)
    for r in doc["runs"]:
        key = (r["backend"], r["dataset"]["name"], r["params"].get("population"))
        if key in (("sequential", "iris", 20), ("cuda", "poker_full", 40)) and r["status"] == "ok":
            r["metrics"]["estimated"] = True
            r["metrics"]["estimate_method"] = "test: scaled from a sample"
    return doc


def gmt_run(backend, name, median, est, gpu_path="fast"):
    params = {"gpu_path": gpu_path} if backend == "cuda" else ({"threads": 16} if backend == "openmp" else {})
    return {"family": "gmt", "backend": backend, "status": "ok", "dataset": {"name": name, "options": {}},
            "params": params, "timing": {"median": median},
            "metrics": {"estimated": True, "estimate_method": "test"} if est else {}}


class Estimated(unittest.TestCase):
    def setUp(self):
        self.runs = pr.ok_runs(fixture_with_estimates())

    def test_operands(self):
        measured, est = {"metrics": {"estimated": False}}, {"metrics": {"estimated": True}}
        self.assertFalse(pr.estimated())
        self.assertFalse(pr.estimated(measured, {"metrics": {}}, {}, None))
        self.assertTrue(pr.estimated(est))
        self.assertTrue(pr.estimated(measured, est))  # a ratio of the two is estimated
        self.assertTrue(pr.estimated(False, True))    # flags already derived combine the same way
        self.assertFalse(pr.estimated({"metrics": {"estimated": "true"}}))  # only JSON true counts

    def test_flags_follow_values(self):
        t = pr.time_series(self.runs)["median"]
        est = {(c, b) for c, d in t.estimated.items() for b, e in d.items() if e}
        self.assertEqual(len(est), 2)
        self.assertEqual(set(t.estimated), set(t))  # one flag per value
        self.assertEqual({c: set(d) for c, d in t.estimated.items()}, {c: set(d) for c, d in t.items()})

    def test_speedup_estimated_when_any_operand_is(self):
        s = pr.speedup_series(self.runs)
        iris20 = next(c for c in s if c.startswith("iris") and c.endswith("20"))
        poker40 = next(c for c in s if c.startswith("poker_full") and c.endswith("40"))
        # the estimated sequential run is the numerator of every speedup of its case
        self.assertEqual(s.estimated[iris20], {"openmp (threads=2)": True, "cuda": True})
        self.assertAlmostEqual(s[iris20]["cuda"], 0.2 / 0.01)  # the values are unchanged
        # the estimated cuda run is the denominator of one speedup only
        self.assertEqual(s.estimated[poker40], {"openmp (threads=2)": False, "cuda": True})
        others = [e for c, d in s.estimated.items() if c not in (iris20, poker40) for e in d.values()]
        self.assertEqual(len(others), 8)
        self.assertFalse(any(others))

    def test_scaling_and_breakdown_flags(self):
        _, lines = pr.scaling_series(self.runs)
        self.assertEqual(lines.estimated["sequential / iris"], [False, True, False])  # populations 10, 20, 40
        self.assertEqual(lines.estimated["cuda / poker_full"], [False, False, True])
        b = pr.breakdown_series(self.runs)
        self.assertEqual(len(b.estimated), len(b))
        self.assertEqual(sum(b.estimated), 2)

    def test_data_output_has_flags(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "est.json")
            with open(p, "w") as f:
                json.dump(fixture_with_estimates(), f)
            r = subprocess.run([sys.executable, SCRIPT, p, "--data"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            data = json.loads(r.stdout)
        sp = data["estimated"]["speedup"]
        self.assertEqual(sum(e for d in sp.values() for e in d.values()), 3)
        self.assertEqual(set(sp), set(data["speedup"]))

    def test_csv_column(self):
        # a derived ratio (gmt_figures' Fig. 16: sequential median / the series' median) and its CSV
        doc = {"experiment": {"id": "gmt_table4"}, "runs": [
            gmt_run("sequential", "armchair10k", 100.0, True), gmt_run("cuda", "armchair10k", 1.0, False),
            gmt_run("openmp", "armchair10k", 20.0, False),
            gmt_run("sequential", "armchair50k", 400.0, False), gmt_run("cuda", "armchair50k", 2.0, False),
            gmt_run("openmp", "armchair50k", 50.0, True)]}
        rows = [r for r in gmt_figures.fig16(doc) if not r["series"].startswith("paper")]
        got = {(r["dataset"], r["series"]): (r["speedup"], r["estimated"]) for r in rows}
        self.assertEqual(got, {("armchair10k", "GPU fast"): (100.0, True), ("armchair10k", "OpenMP 16"): (5.0, True),
                               ("armchair50k", "GPU fast"): (200.0, False), ("armchair50k", "OpenMP 16"): (8.0, True)})
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "fig16.csv")
            pr.write_csv(p, rows + [{"dataset": "x", "rows": None, "series": "s", "speedup": 1.0, "estimated": False}])
            with open(p) as f:
                back = list(csv.DictReader(f))
        self.assertEqual(list(back[0]), ["dataset", "rows", "series", "speedup", "estimated"])
        self.assertEqual([r["estimated"] for r in back], ["true", "true", "false", "true", "false"])
        self.assertEqual(back[-1]["rows"], "")


@unittest.skipUnless(HAVE_MPL, "matplotlib missing (scripts/install-deps.sh installs python3-matplotlib)")
class EstimatedDrawing(unittest.TestCase):
    def setUp(self):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        self.plt = plt

    def tearDown(self):
        self.plt.close("all")

    def test_hollow_points_and_one_legend_entry(self):
        fig, (ax, ax2) = self.plt.subplots(1, 2)
        line = pr.draw_series(ax, [1, 2, 3], [1, 4, 9], [False, True, True], "-o", label="a")
        pr.draw_series(ax, [1, 2, 3], [2, 3, 4], [True, False, False], "--s", label="b")
        bars = pr.draw_bars(ax, [1, 2], [5, 6], [False, True], label="c")
        self.assertEqual(len(ax.lines), 4)  # each series: its line and one overlay of its estimated points
        overlay = ax.lines[1]
        self.assertEqual(list(overlay.get_xdata()), [2, 3])
        self.assertEqual(overlay.get_markerfacecolor(), "white")
        self.assertEqual(overlay.get_markeredgecolor(), line.get_color())
        from matplotlib.colors import same_color
        self.assertTrue(same_color(ax.lines[2].get_color(), "C1"))  # the overlay takes no colour of the cycle
        self.assertEqual(bars.patches[1].get_facecolor()[3], 0.0)  # hollow bar
        self.assertEqual(bars.patches[1].get_edgecolor(), bars.patches[0].get_facecolor())
        labels = [t.get_text() for t in pr.estimated_legend(ax).get_texts()]
        self.assertEqual(labels, ["a", "b", "c", pr.ESTIMATED_LABEL])
        # an axes without estimated values gets no such entry
        pr.draw_series(ax2, [1, 2], [1, 2], [False, False], "-o", label="d")
        self.assertEqual([t.get_text() for t in pr.estimated_legend(ax2).get_texts()], ["d"])
        # a legend shared by panels counts theirs
        self.assertIn(pr.ESTIMATED_LABEL, [t.get_text() for t in pr.estimated_legend(ax2, covers=[ax, ax2]).get_texts()])

    def test_generic_figures_with_estimates(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "est.json")
            with open(p, "w") as f:
                json.dump(fixture_with_estimates(), f)
            r = subprocess.run([sys.executable, SCRIPT, p, "--out", d, "--formats", "svg"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            for kind in ("time", "speedup", "scaling", "breakdown"):
                with open(os.path.join(d, f"fixture_{kind}.svg")) as f:
                    self.assertEqual(f.read().count("hollow: estimated"), 1, kind)


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


class PittFig6(unittest.TestCase):
    """Fig. 6 as the paper defines it: the GPUs' speedup over the single-threaded CPU."""

    @staticmethod
    def run_(backend, median, status="ok", reason="", **params):
        params.setdefault("mode", "evaluate")
        params.setdefault("population", 10)
        return {"backend": backend, "status": status, "reason": reason, "dataset": {"name": "poker"},
                "params": params, "timing": {"median": median}, "metrics": {}}

    def test_speedup_over_one_cpu_thread_and_series_not_run(self):
        doc = {"experiment": {"id": "pitt_fig6"}, "runs": [
            self.run_("openmp", 8.0, threads=1),
            self.run_("openmp", 1.0, threads=16),  # not the paper's baseline
            self.run_("cuda", 0.004, path="fast", devices=1),
            self.run_("cuda", 0.02, path="faithful", devices=1),
            self.run_("cuda", 0.0, status="skipped", reason="device 1 requested, 1 present", path="fast", devices=2)]}
        data = pitt_figures.fig6_data(doc)
        self.assertEqual(sorted(data), ["1 GPU faithful", "1 GPU fast"])
        self.assertAlmostEqual(data["1 GPU fast"][0][2], 2000.0)
        self.assertAlmostEqual(data["1 GPU faithful"][0][2], 400.0)
        self.assertEqual(pitt_figures.fig6_not_run(doc, data), [("2 GPU fast", "device 1 requested, 1 present")])


if __name__ == "__main__":
    unittest.main(verbosity=2)
