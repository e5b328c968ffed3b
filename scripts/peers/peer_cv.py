"""What the cross-validated peer lines of the gp_rules accuracy table share (sklearn_tree_cv.py,
weka_jrip_cv.py): the datasets and the command line, exporting a dataset with its folds, the
entries of an earlier results file to keep, and writing the results file (sorted in the table's
order, replaced atomically)."""
import argparse
import datetime
import json
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import results_json  # noqa: E402  scripts/: the layout of every JSON file under results/

DATASETS = ["iris", "new_thyroid", "ecoli", "contraceptive", "thyroid", "penbased", "shuttle", "connect4", "kddcup",
            "poker_full"]
OPTIONS = {"poker_full": {"rows": 1025010}}


def arguments(doc, out):
    """The peers' shared options (--export, --datasets, --folds, --seed, --out); add more, then parse."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--export", default="build/tools/gp_rules_export")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=out)
    return ap


def export(a, name, path):
    """Dataset `name` as CSV with every row's fold in the last column (build/tools/gp_rules_export)."""
    subprocess.run([a.export, name, json.dumps(OPTIONS.get(name, {})), path, str(a.folds), str(a.seed)], check=True)


def kept_results(out, datasets):
    """The entries of an existing results file for datasets other than those about to run."""
    if not os.path.exists(out):
        return []
    with open(out) as f:
        return [r for r in json.load(f).get("results", []) if r["dataset"] not in datasets]


def write_results(out, model, folds, seed, results, **extra):
    doc = {"model": model, "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "host": socket.gethostname(), **extra,
           "protocol": f"{folds}-fold CV on gp_rules::cv_folds(seed {seed}); accuracy pooled over the folds",
           "results": sorted(results, key=lambda r: DATASETS.index(r["dataset"]) if r["dataset"] in DATASETS else 99)}
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".tmp", "w") as f:
        f.write(results_json.dumps(doc))
    os.replace(out + ".tmp", out)
    print(f"wrote {out}", file=sys.stderr)
