#!/usr/bin/env python3
"""What the Python path adds to the CLI's time, on one machine in one run, the two sides interleaved:

  --family gmt   a GMT fit of Armchair 100K (99,000 training rows of `gmt_study_split armchair100k
                 --test-fraction 0.01 --seed 1`, one CSV for both sides) by `run_experiment --train gmt`
                 and by gpudm.GMTRegressor; their trees are compared (equal, or the run is void).
  --family vfdt  a pass of a 100-tree Hoeffding forest over a 1M-row stream (a CSV of 10 numeric
                 attributes and a drifting binary class, written once) by `run_experiment` on a one-case
                 vfdt config (warm-up 0, one repetition) and by gpudm.HoeffdingForestClassifier.fit; their
                 prequential accuracies are compared (equal: the same forest, or the run is void).

  .venv/bin/python scripts/python_overhead.py [--family gmt|vfdt] [--device cpu|cuda] [--iterations N]
                                              [--rows N] [--pairs 3] [--out results/<tag>/python_overhead_<family>]

Per side: wall time of the whole job (CLI: the process; Python: read_csv + fit) and the learner's
own seconds (GMT: induction; vfdt: the timed prequential pass). Overhead = Python / CLI - 1, medians
over the pairs. Writes OUT.json (scripts/results_json.py layout) and OUT.md.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import results_json  # noqa: E402
from machine_info import cpu_model, gpu_name  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", default="gmt", choices=["gmt", "vfdt"])
    ap.add_argument("--rows", type=int, default=1_000_000, help="vfdt: stream rows")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--iterations", type=int, default=10000)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--build", default=os.environ.get("GPUDM_BUILD_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--out", required=True, help="output prefix (OUT.json, OUT.md)")
    a = ap.parse_args()

    import pandas as pd
    import gpudm

    backend = "cuda" if a.device == "cuda" else ("openmp" if any(b == "openmp" and ok for b, ok, _ in gpudm.backends(a.family)) else "sequential")
    if a.family == "vfdt":
        return vfdt_overhead(a, backend, pd, gpudm)
    tmp = tempfile.mkdtemp(prefix="gpudm_overhead.")
    subprocess.run([os.path.join(a.build, "tools", "gmt_study_split"), "armchair100k", tmp, "--test-fraction", "0.01",
                    "--seed", "1"], check=True, capture_output=True)
    csv = os.path.join(tmp, "armchair100k_train.csv")
    rows = []
    for pair in range(a.pairs):
        # CLI
        t0 = time.perf_counter()
        subprocess.run([os.path.join(a.build, "experiments", "run_experiment"), "--train", "gmt", "--dataset", csv,
                        "--backend", backend, "--seed", "1", "--param", f"iterations={a.iterations}", "--quiet",
                        "--metrics-out", os.path.join(tmp, "m.json"), "--model-out", os.path.join(tmp, "model.json")],
                       check=True, capture_output=True)
        cli_wall = time.perf_counter() - t0
        cli = json.load(open(os.path.join(tmp, "m.json")))
        cli_tree = json.load(open(os.path.join(tmp, "model.json")))["tree"]
        # Python
        t0 = time.perf_counter()
        df = pd.read_csv(csv)
        t1 = time.perf_counter()
        m = gpudm.GMTRegressor(iterations=a.iterations, random_state=1, device=a.device).fit(df.drop(columns="target"), df["target"])
        py_wall = time.perf_counter() - t0
        fit_wall = time.perf_counter() - t1
        same = json.loads(m.model_)["tree"] == cli_tree
        rows.append({"pair": pair, "cli_wall_s": cli_wall, "cli_induction_s": cli["induction_seconds"], "python_wall_s": py_wall,
                     "python_fit_s": fit_wall, "python_induction_s": m.run_["induction_seconds"], "same_tree": same})
        print(f"pair {pair}: CLI {cli_wall:.2f} s (induction {cli['induction_seconds']:.2f}), Python {py_wall:.2f} s "
              f"(fit {fit_wall:.2f}, induction {m.run_['induction_seconds']:.2f}), same tree: {same}", file=sys.stderr)
    return report(a, backend, rows, "induction", "same_tree", "same tree", 99000,
                  f"GMT on Armchair 100K ({backend}, {a.iterations} iterations)", {"iterations": a.iterations})


def vfdt_overhead(a, backend, pd, gpudm):
    import numpy as np
    tmp = tempfile.mkdtemp(prefix="gpudm_overhead.")
    csv = os.path.join(tmp, "stream.csv")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(a.rows, 10)).astype(np.float32)
    late = np.arange(a.rows) >= a.rows // 2  # the concept drifts half way
    y = np.where(late, X[:, 3] > 0.2, (X[:, 0] > 0) ^ (X[:, 1] > 0.5)).astype(int)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(10)])
    frame["class"] = np.where(y == 1, "yes", "no")
    frame.to_csv(csv, index=False)
    cfg = os.path.join(tmp, "vfdt.json")
    with open(cfg, "w") as f:
        json.dump({"experiment": "python_overhead_vfdt", "family": "vfdt",
                   "datasets": [{"path": csv, "target": "class", "task": "classification"}],
                   "params": {"trees": 100}, "cases": [{"backend": backend}], "seeds": [1], "warmup": 0,
                   "repetitions": 1}, f)
    rows = []
    for pair in range(a.pairs):
        out = os.path.join(tmp, f"cli{pair}")
        t0 = time.perf_counter()
        subprocess.run([os.path.join(a.build, "experiments", "run_experiment"), cfg, "-o", out, "-q"],
                       check=True, capture_output=True)
        cli_wall = time.perf_counter() - t0
        run = json.load(open(os.path.join(out, "python_overhead_vfdt.json")))["runs"][0]
        t0 = time.perf_counter()
        df = pd.read_csv(csv)
        t1 = time.perf_counter()
        m = gpudm.HoeffdingForestClassifier(trees=100, random_state=1, device=a.device).fit(df.drop(columns="class"), df["class"])
        py_wall = time.perf_counter() - t0
        fit_wall = time.perf_counter() - t1
        cli_acc, py_acc = run["metrics"]["accuracy"], 100.0 * m.prequential_accuracy_
        same = abs(cli_acc - py_acc) < 1e-9
        rows.append({"pair": pair, "cli_wall_s": cli_wall, "cli_pass_s": run["timing"]["median"], "python_wall_s": py_wall,
                     "python_fit_s": fit_wall, "cli_accuracy": cli_acc, "python_accuracy": py_acc, "same_forest": same})
        print(f"pair {pair}: CLI {cli_wall:.2f} s (pass {run['timing']['median']:.2f}), Python {py_wall:.2f} s "
              f"(fit {fit_wall:.2f}), prequential accuracy {cli_acc:.4f} / {py_acc:.4f}", file=sys.stderr)
    return report(a, backend, rows, None, "same_forest", "same forest (accuracy)", a.rows,
                  f"a 100-tree Hoeffding forest over {a.rows:,} rows ({backend})", {"trees": 100})


def report(a, backend, rows, own, same_key, same_label, n_rows, title, extra):
    """OUT.json and OUT.md of the pairs; exit status 1 when a pair's models differ."""
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k.endswith("_s")}
    doc = {"study": "python_overhead", "family": a.family,
           "definition": __doc__.strip().split("\n\n")[0],
           "provenance": {"git_sha": os.environ.get("GPUDM_GIT_SHA") or subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                                                                                       text=True).stdout.strip() or "unknown",
                          "machine": platform.node(), "cpu": cpu_model(), "cpu_cores": os.cpu_count(), "gpu": gpu_name(),
                          "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},
           "device": a.device, "backend": backend, **extra, "rows": n_rows,
           "pairs": rows, "median": med,
           "overhead_end_to_end": med["python_wall_s"] / med["cli_wall_s"] - 1}
    if own:
        doc[f"overhead_{own}"] = med[f"python_{own}_s"] / med[f"cli_{own}_s"] - 1
    doc["all_models_equal"] = all(r[same_key] for r in rows)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    results_json.dump(doc, a.out + ".json")
    cols = [k for k in rows[0] if k != "pair" and k != same_key]
    L = [f"# The Python path's overhead: {title}", "",
         f"Measured on {doc['provenance']['gpu'] + ' + ' if doc['provenance']['gpu'] else ''}{doc['provenance']['cpu']} "
         f"({os.cpu_count()} cores, host {platform.node()}) at {doc['provenance']['git_sha'][:7]}, "
         f"{doc['provenance']['date_utc']}; `scripts/python_overhead.py --family {a.family} --device {a.device}"
         + (f" --iterations {a.iterations}" if a.family == "gmt" else f" --rows {a.rows}") +
         f" --pairs {a.pairs}`. {doc['definition']}", "",
         "| pair | " + " | ".join(c.replace("_s", " (s)").replace("_", " ") for c in cols) + f" | {same_label} |",
         "|---:|" + "---:|" * len(cols) + "---|"]
    for r in rows:
        L.append(f"| {r['pair']} | " + " | ".join(f"{r[c]:.3f}" if isinstance(r[c], float) else str(r[c]) for c in cols) +
                 f" | {'yes' if r[same_key] else 'NO'} |")
    L += ["", f"Medians: CLI {med['cli_wall_s']:.3f} s, Python {med['python_wall_s']:.3f} s: the Python path adds "
              f"**{100 * doc['overhead_end_to_end']:+.1f} %** end to end (target: at most +5 %)" +
              (f"; {own} {100 * doc[f'overhead_{own}']:+.1f} %." if own else ".")]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(L) + "\n")
    print(L[-1], file=sys.stderr)
    return 0 if doc["all_models_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
