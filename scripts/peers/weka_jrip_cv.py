#!/usr/bin/env python3
"""Weka's JRip (RIPPER, a rule learner) as a peer line of the gp_rules accuracy table.

10-fold cross-validated test accuracy (pooled over the folds) on the same folds our learners use:
each dataset is exported by build/tools/gp_rules_export with the fold of every row
(gp_rules::cv_folds), every fold's training and test part written as ARFF, and Weka 3.6's JRip
(default parameters: 3 folds for pruning, 2 optimisation runs, seed 1) trained on the one and
scored on the other from the command line. The export gives every attribute as a number (a nominal
attribute as its value's code), so JRip sees numeric attributes only; missing values stay missing
('?'). A dataset whose ten folds do not finish within --limit seconds is recorded as not run.

Needs java and Debian's weka package (/usr/share/java/weka.jar). Output:
results/cpu/weka_jrip_cv.json, joined by configs/gp_accuracy.json's "peers" (match: dataset,
folds, seed).

  scripts/peers/weka_jrip_cv.py [--datasets iris,ecoli] [--folds 10] [--seed 1] [--limit 600]
"""
import math
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_cv import OPTIONS, arguments, export, kept_results, write_results  # noqa: E402
JAR = "/usr/share/java/weka.jar"


def write_arff(path, header, rows, classes):
    with open(path, "w") as f:
        f.write("@relation gpudm\n")
        for name in header[:-2]:
            f.write(f"@attribute '{name}' numeric\n")
        f.write("@attribute class {" + ",".join(str(c) for c in classes) + "}\n@data\n")
        for r in rows:
            f.write(",".join("?" if (v == "" or v.lower() == "nan") else v for v in r[:-2]) + "," + r[-2] + "\n")


def main():
    ap = arguments(__doc__, "results/cpu/weka_jrip_cv.json")
    ap.add_argument("--limit", type=float, default=600.0, help="seconds for a dataset's ten folds")
    a = ap.parse_args()
    if not os.path.exists(JAR):
        sys.exit(f"weka_jrip_cv: {JAR} missing (apt-get install weka)")
    version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "weka"], capture_output=True, text=True).stdout or "?"
    results = kept_results(a.out, a.datasets.split(","))  # the other datasets' entries
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.datasets.split(","):
            path = os.path.join(tmp, name + ".csv")
            export(a, name, path)
            with open(path) as f:
                header = f.readline().strip().split(",")
                rows = [line.strip().split(",") for line in f if line.strip()]
            classes = sorted({r[-2] for r in rows}, key=lambda c: int(float(c)))
            t0 = time.time()
            correct, per, status = 0, [], "ok"
            for k in range(a.folds):
                train = [r for r in rows if int(r[-1]) != k]
                test = [r for r in rows if int(r[-1]) == k]
                tr, te = os.path.join(tmp, "train.arff"), os.path.join(tmp, "test.arff")
                write_arff(tr, header, train, classes)
                write_arff(te, header, test, classes)
                left = a.limit - (time.time() - t0)
                if left <= 0:
                    status = "not run: over the time limit"
                    break
                try:
                    out = subprocess.run(["java", "-Xmx8g", "-cp", JAR, "weka.classifiers.rules.JRip", "-t", tr, "-T", te, "-v",
                                          "-S", str(a.seed)], capture_output=True, text=True, timeout=left, check=True).stdout
                except subprocess.TimeoutExpired:
                    status = f"not run: the {a.folds} folds take over {a.limit:.0f} s"
                    break
                test_part = out.split("=== Error on test data ===")[-1]
                m = re.search(r"Correctly Classified Instances\s+(\d+)", test_part)
                if not m:
                    sys.exit(f"weka_jrip_cv: {name} fold {k}: no test accuracy in JRip's output")
                hit = int(m.group(1))
                correct += hit
                per.append(hit / max(1, len(test)))
            entry = {"dataset": name, "options": OPTIONS.get(name, {}), "rows": len(rows), "folds": a.folds, "seed": a.seed,
                     "seconds": time.time() - t0, "status": status}
            if status == "ok":
                entry.update({"accuracy": correct / len(rows), "per_fold": per})
            results.append(entry)
            print(f"{name}: {entry.get('accuracy', math.nan):.4f} {status} ({time.time() - t0:.1f} s)", file=sys.stderr)
    write_results(a.out, f"Weka {version} JRip (default parameters: -F 3 -N 2.0 -O 2 -S {a.seed}), numeric attribute codes", a.folds, a.seed, results)


if __name__ == "__main__":
    main()
