#!/usr/bin/env python3
"""scripts/peers/moa_vfdt.py: the ARFF it writes and the pins it reads (always), then a
seconds-long MOA run (a 3,000-row RT stream and 2,000 instances of MOA's own generator; the
tree and both forests, 10 trees) checked through its JSON. The MOA part needs java and the jar
that scripts/peers/moa_vfdt.sh caches; without either the test exits 77 (ctest: skipped) with the
reason. It never downloads. Needs vfdt_export ($GPUDM_VFDT_EXPORT, default build/tools/vfdt_export)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEERS = os.path.join(ROOT, "scripts", "peers")
sys.path.insert(0, PEERS)
import moa_vfdt  # noqa: E402

SKIP_CODE = 77


def moa_missing():
    """Why the MOA part cannot run here, or None."""
    java = os.environ.get("JAVA", "java")
    if shutil.which(java) is None:
        return f"no java ({java}) on PATH (Debian: default-jre-headless)"
    jar = moa_vfdt.default_jar()
    if not os.path.exists(jar):
        return f"no MOA jar at {jar} (scripts/peers/moa_vfdt.sh --fetch-only caches it; the test never downloads)"
    return None


class Arff(unittest.TestCase):
    def test_nominal_codes_and_class(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "s.csv")
            with open(src, "w") as f:
                f.write("a0,a1,class\n0,3,1\n1,0,0\n0,2,1\n")
            names, rows, max_code, max_label, counts = moa_vfdt.write_arff(src, os.path.join(tmp, "s.arff"), "r")
            with open(os.path.join(tmp, "s.arff")) as f:
                text = f.read()
        self.assertEqual((names, rows, max_code, max_label, counts), (["a0", "a1"], 3, [1, 3], 1, {1: 2, 0: 1}))
        self.assertIn("@attribute a0 {0,1}\n@attribute a1 {0,1,2,3}\n@attribute class {0,1}\n", text)
        self.assertTrue(text.endswith("@data\n0,3,1\n1,0,0\n0,2,1\n"))

    def test_pins_and_options(self):
        pins = moa_vfdt.read_pins()
        self.assertRegex(pins["capymoa_version"], r"^\d+\.\d+\.\d+$")
        for k in ("wheel_sha256", "jar_sha256"):
            self.assertRegex(pins[k], r"^[0-9a-f]{64}$")
        spec, _ = moa_vfdt.learner("forest", "arf", 100, 45)
        self.assertIn("-m 6 -a 1.0", spec)  # floor(sqrt(45))
        self.assertIn("-g 200 -c 1e-7 -t 0.05 -l MC", moa_vfdt.learner("tree", None, 1, 10)[0])
        self.assertIn("-o 10 -u 0 -v 2 -d 5", moa_vfdt.generator_stream(moa_vfdt.GENERATOR_OPTIONS))


REASON = moa_missing()


@unittest.skipIf(REASON is not None, REASON or "")
class MoaRun(unittest.TestCase):
    def test_small_run(self):
        export = os.environ.get("GPUDM_VFDT_EXPORT", os.path.join(ROOT, "build", "tools", "vfdt_export"))
        self.assertTrue(os.path.exists(export), f"vfdt_export not built: {export}")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "moa.json")
            base = [sys.executable, os.path.join(PEERS, "moa_vfdt.py"), "--export-tool", export, "--out", out,
                    "--xmx", "1g", "--streams", "rt_vfml,rt_moa_generator", "--stream-rows", "3000",
                    "--generator-rows", "2000", "--forest-rows", "2000", "--trees", "10"]
            subprocess.run(base + ["--forests", "ozabag_adwin,arf"], check=True, timeout=240)
            with open(out) as f:
                doc = json.load(f)
            pins = moa_vfdt.read_pins()
            self.assertEqual(doc["jar_sha256"], pins["jar_sha256"])
            self.assertEqual(doc["capymoa_version"], pins["capymoa_version"])
            self.assertTrue(doc["moa_version"] and doc["java_version"])
            runs = {(r["dataset"], r["mode"], r["forest"]): r for r in doc["runs"]}
            self.assertEqual(set(runs), {(d, m, f) for d in ("rt_vfml", "rt_moa_generator")
                                         for m, f in (("tree", None), ("forest", "ozabag_adwin"), ("forest", "arf"))})
            for (dataset, mode, forest), r in runs.items():
                n = 3000 if mode == "tree" and dataset == "rt_vfml" else 2000
                self.assertEqual(r["instances"], n, (dataset, mode, forest))
                self.assertEqual(r["total_rows"], 3000 if dataset == "rt_vfml" else 2000)
                self.assertEqual(r["prefix_of_stream"], r["instances"] < r["total_rows"])
                self.assertEqual(r["options"]["rows"], r["total_rows"])
                self.assertTrue(0 < r["accuracy"] <= 100 and 0 < r["majority_rate"] <= 100)
                self.assertTrue(50 <= r["stream_majority_rate"] <= 100)  # two classes
                self.assertIn("-g 200 -c 1e-7 -t 0.05 -l MC", r["command"])
                self.assertIn("EvaluatePrequential", r["command"])
                self.assertNotIn(tmp, r["command"])
                curve = r["curve"]
                points = 100 if mode == "tree" else 200
                self.assertEqual(curve["every"], n // points)
                self.assertEqual(curve["instances"][-1], n)
                self.assertEqual(len(curve["instances"]), points)
                self.assertAlmostEqual(curve["accuracy"][-1], r["accuracy"], places=3)
                self.assertEqual(len(curve["window_accuracy"]), points)
                self.assertTrue(r["wall_s"] > 0 and r["cpu_s"] > 0 and r["moa_eval_cpu_s"] >= 0)
            self.assertIn("OzaBagAdwin -s 10 -l (trees.RandomHoeffdingTree", runs[("rt_vfml", "forest", "ozabag_adwin")]["command"])
            self.assertIn("-m 3 -a 1.0", runs[("rt_vfml", "forest", "arf")]["command"])
            self.assertIn("RandomTreeGenerator", runs[("rt_moa_generator", "tree", None)]["command"])
            # a later run of one stream and mode keeps the other runs
            subprocess.run(base + ["--streams", "rt_vfml", "--modes", "tree"], check=True, timeout=120)
            with open(out) as f:
                again = {(r["dataset"], r["mode"], r["forest"]): r for r in json.load(f)["runs"]}
            self.assertEqual(set(again), set(runs))
            self.assertEqual(again[("rt_vfml", "tree", None)]["accuracy"], runs[("rt_vfml", "tree", None)]["accuracy"])
            with open(os.path.splitext(out)[0] + ".csv") as f:
                self.assertEqual(len(f.read().strip().splitlines()), 1 + len(runs))


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    if not result.wasSuccessful():
        sys.exit(1)
    if REASON is not None:
        print(f"peers.moa_vfdt: skipped the MOA run: {REASON}")
        sys.exit(SKIP_CODE)
