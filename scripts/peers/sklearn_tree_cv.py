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
import os
import platform
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_cv import OPTIONS, arguments, export, kept_results, write_results  # noqa: E402


def main():
    ap = arguments(__doc__, "results/cpu/sklearn_tree_cv.json")
    a = ap.parse_args()
    try:
        import numpy as np
        import sklearn
        from sklearn.impute import SimpleImputer
        from sklearn.pipeline import make_pipeline
        from sklearn.tree import DecisionTreeClassifier
    except ImportError as e:
        sys.exit(f"sklearn_tree_cv: {e} (apt-get install python3-sklearn, run with /usr/bin/python3)")
    results = kept_results(a.out, a.datasets.split(","))  # the other datasets' entries
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.datasets.split(","):
            path = os.path.join(tmp, name + ".csv")
            export(a, name, path)
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
    write_results(a.out, f"sklearn {sklearn.__version__} DecisionTreeClassifier(random_state=0), mean imputation", a.folds, a.seed, results, python=platform.python_version())


if __name__ == "__main__":
    main()
