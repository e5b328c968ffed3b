#!/usr/bin/env python3
"""scikit-learn's DecisionTreeClassifier as the reference line of the gp_rules accuracy table.

10-fold cross-validated test accuracy (pooled over the folds) on the same folds our learners use:
each dataset is exported by build/tools/gp_rules_export with the fold of every row
(gp_rules::cv_folds: a seeded shuffle, row i of the shuffle in fold i mod k). Default parameters,
random_state=0; missing values (none in the paper's datasets) are imputed with the training
fold's column means, since scikit-learn 1.2's trees do not take NaN.

Needs Debian's python3-sklearn (run it with /usr/bin/python3 when another python3 is first on
PATH). Output: results/cpu/sklearn_tree_cv.json, joined by configs/gp_accuracy.json's "peers"
(match: dataset, folds, seed).

  /usr/bin/python3 scripts/peers/sklearn_tree_cv.py [--datasets iris,ecoli] [--folds 10] [--seed 1]
"""
import argparse
import datetime
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time

DATASETS = ["iris", "new_thyroid", "ecoli", "contraceptive", "thyroid", "penbased", "shuttle", "connect4", "kddcup",
            "poker_full"]
OPTIONS = {"poker_full": {"rows": 1025010}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--export", default="build/tools/gp_rules_export")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="results/cpu/sklearn_tree_cv.json")
    a = ap.parse_args()
    try:
        import numpy as np
        import sklearn
        from sklearn.impute import SimpleImputer
        from sklearn.pipeline import make_pipeline
        from sklearn.tree import DecisionTreeClassifier
    except ImportError as e:
        sys.exit(f"sklearn_tree_cv: {e} (apt-get install python3-sklearn, run with /usr/bin/python3)")
    results = []
    if os.path.exists(a.out):  # keep the other datasets' entries
        with open(a.out) as f:
            results = [r for r in json.load(f).get("results", []) if r["dataset"] not in a.datasets.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.datasets.split(","):
            path = os.path.join(tmp, name + ".csv")
            subprocess.run([a.export, name, json.dumps(OPTIONS.get(name, {})), path, str(a.folds), str(a.seed)], check=True)
            data = np.loadtxt(path, delimiter=",", skiprows=1)
            x, y, fold = data[:, :-2], data[:, -2].astype(int), data[:, -1].astype(int)
            t0 = time.time()
            correct, per = 0, []
            for f in range(a.folds):
                tr, te = fold != f, fold == f
                model = make_pipeline(SimpleImputer(strategy="mean"), DecisionTreeClassifier(random_state=0))
                model.fit(x[tr], y[tr])
                hit = int((model.predict(x[te]) == y[te]).sum())
                correct += hit
                per.append(hit / max(1, int(te.sum())))
            acc = correct / len(y)
            results.append({"dataset": name, "options": OPTIONS.get(name, {}), "rows": int(len(y)), "folds": a.folds,
                            "seed": a.seed, "accuracy": acc, "per_fold": per, "seconds": time.time() - t0})
            print(f"{name}: {acc:.4f} ({time.time() - t0:.1f} s)", file=sys.stderr)
    doc = {"model": f"sklearn {sklearn.__version__} DecisionTreeClassifier(random_state=0), mean imputation",
           "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "host": socket.gethostname(), "python": platform.python_version(),
           "protocol": f"{a.folds}-fold CV on gp_rules::cv_folds(seed {a.seed}); accuracy pooled over the folds",
           "results": sorted(results, key=lambda r: DATASETS.index(r["dataset"]) if r["dataset"] in DATASETS else 99)}
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(a.out + ".tmp", a.out)
    print(f"wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
