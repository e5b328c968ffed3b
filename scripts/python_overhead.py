#!/usr/bin/env python3
"""What the Python path adds to the CLI's time: a GMT fit of Armchair 100K (99,000 training rows of
`gmt_study_split armchair100k --test-fraction 0.01 --seed 1`, one CSV for both sides) by
`run_experiment --train gmt` and by gpudm.GMTRegressor, interleaved, on one machine in one run.

  .venv/bin/python scripts/python_overhead.py [--device cpu|cuda] [--iterations N] [--pairs 3]
                                              [--out results/<tag>/python_overhead]

Both sides read the CSV and fit with the same params and seed; their trees are compared (equal, or
the run is void). Per side: wall time of the whole job (CLI: the process; Python: read_csv + fit) and
the induction seconds the learner reports. Overhead = Python / CLI - 1, medians over the pairs.
Writes OUT.json (scripts/results_json.py layout) and OUT.md.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--iterations", type=int, default=10000)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--build", default=os.environ.get("GPUDM_BUILD_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--out", required=True, help="output prefix (OUT.json, OUT.md)")
    a = ap.parse_args()

    import pandas as pd
    import gpudm

    backend = "cuda" if a.device == "cuda" else ("openmp" if any(b == "openmp" and ok for b, ok, _ in gpudm.backends("gmt")) else "sequential")
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
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k.endswith("_s")}
    doc = {"study": "python_overhead",
           "definition": __doc__.strip().split("\n\n")[0],
           "provenance": {"git_sha": os.environ.get("GPUDM_GIT_SHA") or subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                                                                                       text=True).stdout.strip() or "unknown",
                          "machine": platform.node(), "cpu_cores": os.cpu_count(),
                          "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},
           "device": a.device, "backend": backend, "iterations": a.iterations, "rows": 99000,
           "pairs": rows, "median": med,
           "overhead_end_to_end": med["python_wall_s"] / med["cli_wall_s"] - 1,
           "overhead_induction": med["python_induction_s"] / med["cli_induction_s"] - 1,
           "all_trees_equal": all(r["same_tree"] for r in rows)}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    results_json.dump(doc, a.out + ".json")
    L = [f"# The Python path's overhead: GMT on Armchair 100K ({backend}, {a.iterations} iterations)", "",
         f"Measured on {platform.node()} ({os.cpu_count()} cores) at {doc['provenance']['git_sha'][:7]}, "
         f"{doc['provenance']['date_utc']}; `scripts/python_overhead.py --device {a.device} --iterations {a.iterations} "
         f"--pairs {a.pairs}`. {doc['definition']}", "",
         "| pair | CLI wall (s) | CLI induction (s) | Python read+fit (s) | Python fit (s) | Python induction (s) | same tree |",
         "|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        L.append(f"| {r['pair']} | {r['cli_wall_s']:.3f} | {r['cli_induction_s']:.3f} | {r['python_wall_s']:.3f} | "
                 f"{r['python_fit_s']:.3f} | {r['python_induction_s']:.3f} | {'yes' if r['same_tree'] else 'NO'} |")
    L += ["", f"Medians: CLI {med['cli_wall_s']:.3f} s, Python {med['python_wall_s']:.3f} s: the Python path adds "
              f"**{100 * doc['overhead_end_to_end']:+.1f} %** end to end (target: at most +5 %); induction "
              f"{100 * doc['overhead_induction']:+.1f} %."]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(L) + "\n")
    print("\n".join(L[-1:]), file=sys.stderr)
    return 0 if doc["all_trees_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
