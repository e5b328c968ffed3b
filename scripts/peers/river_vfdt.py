#!/usr/bin/env python3
"""River as a live peer of the vfdt family.

Runs River's HoeffdingTreeClassifier (mode "tree") and ARFClassifier (mode "forest": n_models=100,
lambda=1, sqrt features, one ADWIN per tree, no background trees) prequentially
(predict_one, then learn_one) on the same streams our learners see: each stream is exported by
build/tools/vfdt_export as integer codes (binary, nominal, quantile-binned numeric),
and every attribute is declared nominal so River splits multiway on the codes as ours does.
Hoeffding parameters match ours: delta 1e-7, tau 0.05, grace period 200, majority-class leaves.
The forest runs with each vote (--votes): River's own vote ("soft": the sum of the trees' class
probabilities, disable_weighted_vote=True, as MOA's ARF) and one vote per tree ("majority", ties
-> the lowest class), which is how our forest and the paper's GPU forest vote; and with each reset
rule (--detectors): River's own ("any": a tree is reset whenever its ADWIN cuts its window, also
when its error fell) and MOA's ("rise": MOA's ADWINChangeDetector counts a cut as a change only
when the error estimate rose, which is also our forest's rule). River's "any" resets young trees
that are still getting better: on rt_moa's 20k prefix 32-57 resets against 0 with "rise".
Warnings and background trees are off (warning_detector=NoDrift(): River replaces None by ADWIN).

River processes one instance at a time in Python (~10^3-10^4 instances/s for a tree, ~10^2 for a
forest of 100), so large streams are run on a prefix (--tree-rows / --forest-rows); the JSON says
so (prefix_of_stream, instances vs total_rows) and the tables compare it with our accuracy on the
same prefix (metrics.accuracy_at_prefix, recorded for the vfdt param accuracy_prefixes).

Output: results/cpu/river_vfdt.json (joined into the vfdt tables by the configs' "peers", see
docs/config-format.md) and a .csv beside it.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time

from vfdt_streams import DEFAULT_EXPORT_TOOL, STREAMS, export, write_results


def read_stream(path, limit):
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        names = header[:-1]
        total = 0
        rows = []
        for row in r:
            total += 1
            if limit and len(rows) >= limit:
                continue
            rows.append(({n: int(v) for n, v in zip(names, row[:-1])}, int(row[-1])))
    return names, rows, total


class MajorityVote:
    """River's ARF with one vote per tree (ties -> the lowest class), as our forest and the paper vote.
    River's own ARF (and MOA's) sums the trees' class probabilities instead ("soft")."""

    def __init__(self, forest):
        self.forest = forest

    def predict_one(self, x):
        votes = {}
        for member in self.forest:
            p = member.predict_one(x)
            if p is not None:
                votes[p] = votes.get(p, 0) + 1
        if not votes:
            return None
        top = max(votes.values())
        return min(c for c, v in votes.items() if v == top)

    def learn_one(self, x, y):
        self.forest.learn_one(x, y)


def rising_adwin(delta):
    """MOA's ADWINChangeDetector on River's ADWIN: a cut is a change only if the estimate rose.

    River's ADWIN.update starts by dropping its whole window when the previous update cut it; MOA
    keeps the shortened window. So this overrides update() itself: the helper cuts as usual, and a
    cut that lowered the estimate leaves the shortened window and reports no drift. (ARF replaces
    the detector by a clone() after a reported drift, so a rising cut needs no reset here.)"""
    from river import drift

    class RisingADWIN(drift.ADWIN):
        def update(self, x):
            before = self.estimation
            self._drift_detected = self._helper.update(x) and self.estimation > before

    return RisingADWIN(delta=delta)


def make_model(mode, names, seed, vote="soft", detector="any"):
    from river import drift, forest, tree

    common = dict(grace_period=200, delta=1e-7, tau=0.05, leaf_prediction="mc", nominal_attributes=list(names))
    if mode == "tree":
        return tree.HoeffdingTreeClassifier(**common), "river.tree.HoeffdingTreeClassifier"
    arf = forest.ARFClassifier(
        n_models=100,
        max_features="sqrt",
        lambda_value=1,
        disable_weighted_vote=True,
        drift_detector=drift.ADWIN(delta=0.002) if detector == "any" else rising_adwin(0.002),
        # NoDrift, not None: River's ARFClassifier replaces None by ADWIN(0.01) and then grows
        # background trees on warnings (passing None would run River's forest with background
        # trees while the results say it has none)
        warning_detector=drift.NoDrift(),
        seed=seed,
        **common,
    )
    label = ("river.forest.ARFClassifier(n_models=100, lambda=1, sqrt, no background, ADWIN 0.002, "
             + ("reset on any cut: River's rule)" if detector == "any" else "reset when the error rose: MOA's rule)"))
    if vote == "majority":
        return MajorityVote(arf), label + " with one vote per tree (majority, ties -> lowest class)"
    return arf, label + " (River's vote: sum of the trees' class probabilities)"


def prequential(model, rows):
    correct = 0
    t0 = time.perf_counter()
    for x, y in rows:
        p = model.predict_one(x)
        correct += p == y
        model.learn_one(x, y)
    seconds = time.perf_counter() - t0
    return 100.0 * correct / max(1, len(rows)), seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--export-tool", default=DEFAULT_EXPORT_TOOL)
    ap.add_argument("--out", default=os.path.join(root, "results", "cpu", "river_vfdt.json"))
    ap.add_argument("--tree-rows", type=int, default=200000, help="prefix for the single tree (0 = all)")
    ap.add_argument("--forest-rows", type=int, default=5000, help="prefix for the forest of 100 (0 = all)")
    ap.add_argument("--streams", default=",".join(n for n, _ in STREAMS))
    ap.add_argument("--modes", default="tree,forest")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--votes", default="soft,majority",
                    help="forest votes to run: soft (River's: sum of class probabilities), majority (one vote per tree)")
    ap.add_argument("--detectors", default="any,rise",
                    help="forest reset rules to run: any (River's: every ADWIN cut), rise (MOA's: a cut that raised the error)")
    args = ap.parse_args()

    import river

    wanted = set(args.streams.split(","))
    runs = []
    if os.path.exists(args.out):  # keep runs of streams not redone now
        redo = lambda r: (r["dataset"] in wanted and r["mode"] in args.modes.split(",")
                          and (r["mode"] == "tree" or (r.get("vote", "soft") in args.votes.split(",")
                                                       and r.get("detector", "any") in args.detectors.split(","))))
        with open(args.out) as f:
            runs = [r for r in json.load(f).get("runs", []) if not redo(r)]
    with tempfile.TemporaryDirectory() as tmp:
        for name, options in STREAMS:
            if name not in wanted:
                continue
            path = os.path.join(tmp, name + ".csv")
            try:
                export(args.export_tool, name, options, path)
            except subprocess.CalledProcessError as e:
                print(f"river_vfdt: {name}: export failed ({e}); skipped", file=sys.stderr)
                continue
            combos = [(m, v, d) for m in args.modes.split(",")
                      for v in (["soft"] if m == "tree" else args.votes.split(","))
                      for d in (["any"] if m == "tree" else args.detectors.split(","))]
            for mode, vote, detector in combos:
                limit = args.tree_rows if mode == "tree" else args.forest_rows
                names, rows, total = read_stream(path, limit)
                model, label = make_model(mode, names, args.seed, vote, detector)
                acc, seconds = prequential(model, rows)
                run = {
                    "dataset": name,
                    "options": options,
                    "mode": mode,
                    "vote": vote if mode == "forest" else "tree",
                    **({"detector": detector} if mode == "forest" else {}),
                    "model": label,
                    "river_version": river.__version__,
                    "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "instances": len(rows),
                    "total_rows": total,
                    "prefix_of_stream": len(rows) < total,
                    "accuracy": round(acc, 4),
                    "seconds": round(seconds, 3),
                    "instances_per_s": round(len(rows) / seconds, 1) if seconds > 0 else None,
                    "clock": "wall (time.perf_counter), single Python thread",
                }
                print(f"river_vfdt: {name} {mode} ({run['vote']}, {run.get('detector', '-')}): {len(rows)}/{total} instances, accuracy {acc:.2f} %, "
                      f"{run['instances_per_s']} inst/s", file=sys.stderr)
                runs.append(run)
    doc = {
        "schema": "gpudm river peer 1",
        "river_version": river.__version__,
        "python": platform.python_version(),
        "host": socket.gethostname(),
        "cpu": platform.processor() or platform.machine(),
        "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "argv": sys.argv,
        "note": "Streams exported by vfdt_export (codes as the vfdt learners see them); all attributes nominal. "
                "Prefix runs: accuracy over the first `instances` of `total_rows`.",
        "runs": sorted(runs, key=lambda r: (r["dataset"], r["mode"], r.get("vote", "soft"), r.get("detector", "any"))),
    }
    write_results(args.out, doc,
                  ["dataset", "mode", "vote", "detector", "instances", "total_rows", "accuracy_pct", "seconds", "instances_per_s"],
                  [[r["dataset"], r["mode"], r.get("vote", "soft" if r["mode"] == "forest" else "tree"),
                    r.get("detector", "any" if r["mode"] == "forest" else ""), r["instances"],
                    r["total_rows"], r["accuracy"], r["seconds"], r["instances_per_s"]] for r in doc["runs"]])
    print(f"river_vfdt: wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
