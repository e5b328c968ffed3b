#!/usr/bin/env python3
"""Summarises scripts/device/gmt.sh's probe stage: per short induction (--train gmt metrics), the
seconds per EA iteration by phase, evaluations and evaluator calls per iteration, repairs.

  gmt_probe_summary.py DIR          the probe_*.json files of DIR
  gmt_probe_summary.py --ab DIR     the ab stage's ab_<set>__<param>=<value>_<pair>.json files: per set
                                    and value the mean, min and max run time and the mean ms per
                                    iteration by phase; per pair the difference (first value minus
                                    second); whether the runs' trees agree (leaves, RMSE, repairs)
"""
import glob
import json
import os
import re
import statistics
import sys


def load(f):
    m = json.load(open(f))
    it = max(1, m.get("iterations", 1))
    return m, it


def probes(folder):
    for f in sorted(glob.glob(os.path.join(folder, "probe_*.json"))):
        if f.endswith(".model.json"):
            continue
        m, it = load(f)
        phases = m.get("breakdown", {})
        per = ", ".join(f"{name} {1e3 * p['seconds'] / it:.3f}" for name, p in sorted(phases.items(), key=lambda kv: -kv[1]["seconds"]))
        print(f"{os.path.basename(f)[6:-5]}: {m['induction_seconds']:.2f} s for {it} it = "
              f"{1e3 * m['induction_seconds'] / it:.3f} ms/it; evals/it {m['evaluations'] / it:.1f}, "
              f"calls {m.get('evaluate_calls')}, repairs {m.get('repairs')}, leaves {m['leaves']}, "
              f"train rmse {m['train']['rmse']:.4g}\n   ms/it by phase: {per}")


def ab(folder):
    pat = re.compile(r"^ab_(?P<set>.+?)__(?P<name>[a-z0-9_]+)=(?P<value>[^_]+)_(?P<pair>\d+)\.json$")
    runs = {}  # set -> value -> pair -> metrics
    order = {}  # set -> values in the order of pair 1
    for f in sorted(glob.glob(os.path.join(folder, "ab_*.json")), key=os.path.getmtime):
        g = pat.match(os.path.basename(f))
        if not g:
            continue
        m, it = load(f)
        runs.setdefault(g["set"], {}).setdefault(g["value"], {})[int(g["pair"])] = (m, it)
        if g["pair"] == "1":
            order.setdefault(g["set"], [])
            if g["value"] not in order[g["set"]]:
                order[g["set"]].append(g["value"])
        name = g["name"]
    if not runs:
        print(f"no ab_*.json in {folder}")
        return 1
    for s, by_value in runs.items():
        values = order.get(s) or sorted(by_value)
        print(f"{s} ({name}):")
        trees = set()
        for v in values:
            ms = by_value.get(v, {})
            secs = [m["induction_seconds"] for m, _ in ms.values()]
            if not secs:
                continue
            phases = {}
            for m, it in ms.values():
                for p, x in m.get("breakdown", {}).items():
                    phases.setdefault(p, []).append(1e3 * x["seconds"] / it)
                trees.add((m["leaves"], round(m["train"]["rmse"], 10), m.get("repairs")))
            per = ", ".join(f"{p} {statistics.mean(x):.3f}" for p, x in sorted(phases.items(), key=lambda kv: -statistics.mean(kv[1])))
            print(f"  {name}={v}: mean {statistics.mean(secs):.2f} s (min {min(secs):.2f}, max {max(secs):.2f}, {len(secs)} runs)\n"
                  f"     mean ms/it by phase: {per}")
        if len(values) == 2:
            a, b = values
            diffs = [by_value[a][k][0]["induction_seconds"] - by_value[b][k][0]["induction_seconds"]
                     for k in sorted(by_value.get(a, {})) if k in by_value.get(b, {})]
            if diffs:
                print(f"  pairs ({a} minus {b}): " + ", ".join(f"{d:+.2f}" for d in diffs) + f" s; mean {statistics.mean(diffs):+.2f} s")
        print(f"  trees: {'the same in every run' if len(trees) == 1 else 'DIFFER: ' + str(sorted(trees))}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--ab":
        sys.exit(ab(sys.argv[2]))
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    probes(sys.argv[1])
