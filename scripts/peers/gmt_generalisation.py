#!/usr/bin/env python3
"""GMT's generalisation study: GMT variants beside Weka 3.6 M5P and REPTree on the same folds.

usage: gmt_generalisation.py --gmt DIR --weka DIR --out PREFIX [--machine TEXT]
  --gmt   the GPU runs (scripts/device/gmt.sh generalisation): DIR/<tree variant>/s<seed>/<set>.json,
          each the metrics of `--train gmt --cv 10 --cv-only --seed <seed>`
  --weka  scripts/peers/gmt_generalisation.sh's outputs: DIR/<set>/s<seed>/f<k>.{M5P,REPTree}.txt
          and folds.json (the folds' test-row fingerprints)
  --out   writes PREFIX.json, PREFIX.csv, PREFIX.md and PREFIX.png / .svg (matplotlib)

GMT variants: each tree variant's runs scored without bounds and with them (clamp_margin 0.1, the
run's own setting), so "rule_off" gives the old default and the clamp alone, "rule" the leaf rule
alone and the new default. Pooled RMSE = sqrt(sum of squared errors over every fold of every seed
/ rows); the per-fold spread is the mean and sd of the fold RMSEs. A set counts only where GMT and
Weka ran the same folds (fingerprints compared per fold); a mismatch stops the script.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from weka_output import weka  # noqa: E402

ORDER = ["armchair10k", "pol", "elevators", "cal_housing", "house16h", "house8l", "2dplanes", "fried", "mv", "elnino"]
LABEL = {"armchair10k": "Armchair 10K", "pol": "Pol", "elevators": "Elevators", "cal_housing": "Cal housing",
         "house16h": "House 16H", "house8l": "House 8L", "2dplanes": "2dplanes", "fried": "Fried", "mv": "Mv",
         "elnino": "Elnino"}
# (name, tree variant folder, bounded?, description)
VARIANTS = [
    ("old default", "rule_off", False, "rows_per_param 0, no clamp (the default before this study)"),
    ("clamp alone", "rule_off", True, "rows_per_param 0, clamp_margin 0.1"),
    ("rule alone", "rule", False, "rows_per_param 1 (the papers' rule), no clamp"),
    ("new default", "rule", True, "rows_per_param 1, clamp_margin 0.1"),
]


def pooled(folds):
    n = sum(f["rows"] for f in folds)
    rmse = math.sqrt(sum(f["rmse"] ** 2 * f["rows"] for f in folds) / n)
    mae = sum(f["mae"] * f["rows"] for f in folds) / n
    per = [f["rmse"] for f in folds]
    out = {"rmse": rmse, "mae": mae, "fold_rmse_mean": statistics.mean(per),
           "fold_rmse_sd": statistics.stdev(per) if len(per) > 1 else 0.0, "folds": len(folds), "rows": n}
    for k in ("leaves", "attrs", "seconds"):
        v = [f[k] for f in folds if f.get(k) is not None]
        out[k] = statistics.mean(v) if v else None
    if all("max_abs_error" in f for f in folds):
        out["max_abs_error"] = max(f["max_abs_error"] for f in folds)
        out["clamped"] = sum(f.get("clamped", 0) for f in folds)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gmt", required=True)
    ap.add_argument("--weka", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--machine", default="")
    a = ap.parse_args()

    gmt = {}  # (tree variant, set) -> {seed: metrics}
    for tv in sorted(os.listdir(a.gmt)):
        if not os.path.isdir(os.path.join(a.gmt, tv)):
            continue
        for sd in sorted(os.listdir(os.path.join(a.gmt, tv))):
            for f in sorted(os.listdir(os.path.join(a.gmt, tv, sd))):
                if f.endswith(".json"):
                    gmt.setdefault((tv, f[:-5]), {})[int(sd[1:])] = json.load(open(os.path.join(a.gmt, tv, sd, f)))
    sets = [s for s in ORDER if any(k[1] == s for k in gmt)]
    rows, margin_rows, problems = [], [], []
    seeds_used = set()
    for s in sets:
        wdir = os.path.join(a.weka, s)
        wseeds = sorted(int(d[1:]) for d in os.listdir(wdir)) if os.path.isdir(wdir) else []
        # seeds that both GMT variants and Weka have, complete
        seeds = [sd for sd in wseeds if all(sd in gmt.get((tv, s), {}) for tv in ("rule_off", "rule"))]
        weka = {"M5P": [], "REPTree": []}
        for sd in seeds:
            fj = json.load(open(os.path.join(wdir, f"s{sd}", "folds.json")))
            fps = [f["test_rows_fingerprint"] for f in fj["per_fold"]]
            for tv in ("rule_off", "rule"):
                g = [f["test_rows_fingerprint"] for f in gmt[(tv, s)][sd]["cv"]["per_fold"]]
                if g != fps:
                    sys.exit(f"gmt_generalisation: {s} seed {sd}: GMT ({tv}) and Weka ran different folds")
            for m in weka:
                for k in range(len(fps)):
                    p = os.path.join(wdir, f"s{sd}", f"f{k}.{m}.txt")
                    if not os.path.exists(p):
                        problems.append(f"{s} seed {sd} fold {k} {m}: no Weka output")
                        continue
                    weka[m].append(weka(p))
        if not seeds:
            problems.append(f"{s}: no seed with both GMT variants and Weka")
            continue
        seeds_used.update(seeds)
        out = {"set": s, "seeds": seeds}
        for m, folds in weka.items():
            out[m] = pooled(folds)
        for name, tv, bounded, _ in VARIANTS:
            folds = []
            for sd in seeds:
                for f in gmt[(tv, s)][sd]["cv"]["per_fold"]:
                    t = f["test"] if bounded else f.get("test_unbounded", f["test"])
                    folds.append({"rows": t["rows"], "rmse": t["rmse"], "mae": t["mae"], "max_abs_error": t["max_abs_error"],
                                  "clamped": t.get("clamped", 0), "leaves": f["leaves"], "attrs": f["attributes_in_models"],
                                  "seconds": f["seconds"]})
            out[name] = pooled(folds)
            out[name]["rmse_vs_m5p"] = out[name]["rmse"] / out["M5P"]["rmse"]
        out["REPTree"]["rmse_vs_m5p"] = out["REPTree"]["rmse"] / out["M5P"]["rmse"]
        # the clamp margin sweep (scores of the same trees, pooled over seeds)
        for tv in ("rule_off", "rule"):
            by = {}
            for sd in seeds:
                n = sum(f["test"]["rows"] for f in gmt[(tv, s)][sd]["cv"]["per_fold"])
                for e in gmt[(tv, s)][sd]["cv"]["by_clamp_margin"]:
                    acc = by.setdefault(e["clamp_margin"], [0.0, 0])
                    acc[0] += e["rmse"] ** 2 * n
                    acc[1] += n
            margin_rows.append({"set": s, "tree": tv, **{str(k): math.sqrt(v[0] / v[1]) / out["M5P"]["rmse"] for k, v in sorted(by.items())}})
        rows.append(out)

    summary = {}
    for name, _, _, desc in VARIANTS:
        r = [x[name]["rmse_vs_m5p"] for x in rows]
        lv = [x["M5P"]["leaves"] / x[name]["leaves"] for x in rows]
        summary[name] = {"description": desc, "sets": len(r), "at_most_1.05": sum(v <= 1.05 for v in r),
                         "above_1.25": sum(v > 1.25 for v in r), "max_ratio": max(r) if r else None,
                         "geo_mean_ratio": math.exp(statistics.mean(math.log(v) for v in r)) if r else None,
                         "mean_m5p_rules_per_gmt_leaf": statistics.mean(lv) if lv else None}
    doc = {"study": "gmt_generalisation", "machine": a.machine, "seeds": sorted(seeds_used), "variants":
           [{"name": n, "tree": tv, "bounded": b, "description": d} for n, tv, b, d in VARIANTS],
           "rows": rows, "clamp_margin_sweep": margin_rows, "summary": summary, "problems": problems}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out + ".json", "w") as f:
        json.dump(doc, f, indent=1)

    names = [v[0] for v in VARIANTS]
    with open(a.out + ".csv", "w") as f:
        f.write("set,learner,pooled_rmse,pooled_mae,fold_rmse_mean,fold_rmse_sd,rmse_vs_m5p,max_abs_error,clamped,leaves,attributes_in_models,seconds_per_fold\n")
        for x in rows:
            for m in ["M5P", "REPTree"] + names:
                v = x[m]
                f.write(",".join(str(c) for c in [x["set"], m, v["rmse"], v["mae"], v["fold_rmse_mean"], v["fold_rmse_sd"],
                                                   v.get("rmse_vs_m5p", 1.0), v.get("max_abs_error", ""), v.get("clamped", ""),
                                                   v["leaves"], v["attrs"], v["seconds"]]) + "\n")

    def g(v):
        return f"{v:.4g}" if v is not None else "–"

    L = ["# GMT generalisation: 10-fold cross-validation beside Weka M5P and REPTree on the same folds", ""]
    if a.machine:
        L += [a.machine, ""]
    L += [f"Seeds {', '.join(map(str, sorted(seeds_used)))}; 10 folds each; GMT on the GPU (CUDA fast path), 10,000 iterations, "
          "population 64, defaults except the variant's params; Weka 3.6 M5P `-M 4` and REPTree (defaults) on the folds "
          "exported by `gmt_study_split --folds 10 --seed S` (the same test rows as GMT's `--cv 10 --seed S`: every fold's "
          "test-row fingerprint compared).", "",
          "GMT variants (two sets of trees; the clamp changes predictions only, so each tree set is scored both ways):", ""]
    L += [f"- **{n}**: {d}" for n, _, _, d in VARIANTS]
    L += ["", "## Pooled test RMSE relative to M5P (lower is better)", "",
          "| set | M5P RMSE | REPTree | " + " | ".join(names) + " |", "|---|---:|---:|" + "---:|" * len(names)]
    for x in rows:
        L.append(f"| {LABEL.get(x['set'], x['set'])} | {g(x['M5P']['rmse'])} | {x['REPTree']['rmse_vs_m5p']:.3f} | " +
                 " | ".join(f"{x[n]['rmse_vs_m5p']:.3f}" for n in names) + " |")
    L += ["", "| summary | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for key, label in (("at_most_1.05", "sets at or below 1.05 x M5P"), ("above_1.25", "sets above 1.25 x M5P"),
                       ("max_ratio", "largest ratio"), ("geo_mean_ratio", "geometric mean ratio"),
                       ("mean_m5p_rules_per_gmt_leaf", "M5P rules per GMT leaf (mean over sets)")):
        L.append(f"| {label} | " + " | ".join(g(summary[n][key]) if isinstance(summary[n][key], float)
                                               else f"{summary[n][key]} of {summary[n]['sets']}" for n in names) + " |")
    L += ["", "## Per set: pooled RMSE, MAE, fold RMSE mean ± sd, largest |error|, size, time", "",
          "| set | learner | RMSE | MAE | fold RMSE mean ± sd | max abs error | clamped | leaves / rules | attributes in models | s per fold |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for x in rows:
        for m in ["M5P", "REPTree"] + names:
            v = x[m]
            L.append(f"| {LABEL.get(x['set'], x['set'])} | {m} | {g(v['rmse'])} | {g(v['mae'])} | {g(v['fold_rmse_mean'])} ± "
                     f"{g(v['fold_rmse_sd'])} | {g(v.get('max_abs_error'))} | {v.get('clamped', '–')} | {g(v['leaves'])} | "
                     f"{g(v['attrs'])} | {g(v['seconds'])} |")
    L += ["", "## Clamp margin: pooled RMSE relative to M5P by clamp_margin (the same trees)", ""]
    if margin_rows:
        ms = [k for k in margin_rows[0] if k not in ("set", "tree")]
        L += ["| set | trees | " + " | ".join(ms) + " |", "|---|---|" + "---:|" * len(ms)]
        for r in margin_rows:
            L.append(f"| {LABEL.get(r['set'], r['set'])} | {r['tree']} | " + " | ".join(f"{r[m]:.3f}" for m in ms) + " |")
    L += ["", "Notes:", "",
          "- Times: GMT's are induction seconds per fold on the GPU with several study processes sharing it (see the run's "
          "log), Weka's its own 'Time taken to build model' on the CPU machine named in the Weka environment file; they "
          "are not a speed comparison (Tables 3-4 are).",
          "- Leaves: GMT's mean over folds; M5P's rules; REPTree's leaves. Attributes in models: GMT's and M5P's linear "
          "model terms over all leaves (REPTree has constant leaves).",
          "- Max abs error: the largest |target - prediction| over every test row of every fold and seed (GMT only)."]
    if problems:
        L += ["", "Not run or incomplete:", ""] + [f"- {p}" for p in problems]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(L) + "\n")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("gmt_generalisation: matplotlib not available, no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(9, 4.5))
    xs = list(range(len(rows)))
    marks = {"old default": "x", "clamp alone": "^", "rule alone": "v", "new default": "o", "REPTree": "s"}
    for m in ["REPTree"] + names:
        ax.plot(xs, [x[m]["rmse_vs_m5p"] for x in rows], marks[m], label=m, markersize=7, fillstyle="none" if m == "REPTree" else "full")
    for y, st in ((1.0, "-"), (1.05, ":"), (1.25, "--")):
        ax.axhline(y, color="gray", linestyle=st, linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels([LABEL.get(x["set"], x["set"]) for x in rows], rotation=30, ha="right")
    ax.set_ylabel("pooled test RMSE / M5P's")
    ax.set_title("GMT 10-fold CV on the same folds as Weka M5P (lines: 1, 1.05, 1.25)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{a.out}.{ext}", dpi=120)


if __name__ == "__main__":
    main()
