#!/usr/bin/env python3
"""GMT's generalisation study: GMT variants beside Weka 3.6 M5P and REPTree on the same folds.

usage:
  gmt_generalisation.py weka-summary RAW_DIR OUT.json
      Weka's fold outputs (scripts/peers/gmt_generalisation.sh: RAW_DIR/<set>/s<seed>/f<k>.{M5P,REPTree}.{txt,time}
      and folds.json) read into one JSON (the outputs themselves are ~25 MB a seed; the summary is what is kept).
  gmt_generalisation.py render --gmt DIR --weka SUMMARY.json --out PREFIX
      --gmt: the GPU runs (scripts/device/gmt.sh generalisation): DIR/<tree variant>/s<seed>/<set>.json, each the
      metrics of `run_experiment --train gmt --cv 10 --cv-only --seed <seed>` with its "provenance" (commit, GPU);
      writes PREFIX.json, PREFIX.csv, PREFIX.md and PREFIX.png (matplotlib).
  gmt_generalisation.py merge OUT.json PART.json...
      the parts of one cross-validation (`--cv-folds LIST`, each with its folds' records) into the
      whole run's metrics: the same set, seed, folds and params, every fold once; the pooled scores
      recomputed from the folds' records (a set whose 10 folds do not fit one device call runs in parts).

GMT variants: each tree variant's runs scored without bounds and with them (clamp_margin 0.1, the
run's own setting), so "rule_off" gives the old default and the clamp alone, "rule" the leaf rule
alone and the new default. Pooled RMSE = sqrt(sum of squared errors over every fold of every seed
/ rows); the per-fold spread is the mean and sd of the fold RMSEs. A set and seed count only where
GMT's two tree variants and Weka all ran (their folds' test-row fingerprints are compared: a
mismatch stops the script); what is missing is listed under the table.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import results_json  # noqa: E402  scripts/: the layout of every JSON file under results/
from weka_output import weka  # noqa: E402

ORDER = ["armchair10k", "pol", "elevators", "cal_housing", "house16h", "house8l", "2dplanes", "fried", "mv", "elnino"]
LABEL = {"armchair10k": "Armchair 10K", "pol": "Pol", "elevators": "Elevators", "cal_housing": "Cal housing",
         "house16h": "House 16H", "house8l": "House 8L", "2dplanes": "2dplanes", "fried": "Fried", "mv": "Mv",
         "elnino": "Elnino"}
# (name, tree variant folder, smoothing constant k, clamp margin (None: no clamp), description).
# Smoothing and the clamp change predictions only: each tree set's runs score every (k, margin)
# of their grid (cv.by_smoothing_and_clamp), so the variants of one tree set are one run's scores.
VARIANTS = [
    ("old default", "rule_off", 0, None, "rows_per_param 0, no clamp, no smoothing (the default before this study)"),
    ("clamp alone", "rule_off", 0, 0.1, "rows_per_param 0, clamp_margin 0.1"),
    ("rule alone", "rule", 0, None, "rows_per_param 1 (the papers' rule), no clamp"),
    ("rule + clamp", "rule", 0, 0.1, "rows_per_param 1, clamp_margin 0.1"),
    ("rule + smoothing", "rule", 15, None, "rows_per_param 1, smoothing 15 (M5's constant), no clamp"),
    ("new default", "rule", 15, 0.1, "rows_per_param 1, smoothing 15, clamp_margin 0.1"),
]
SMOOTHING_GRID_TREES = "rule"  # the tree set whose smoothing x clamp grid is tabulated


class MissingScores(Exception):
    pass


def fold_scores(run, fold, k, margin):
    """A fold's test scores under smoothing k and clamp margin (None: unclamped), from the run's own
    scores when they are that point, else from its grid."""
    cv = run["cv"]
    if k == cv.get("smoothing", 0) and (margin is None or margin == cv["clamp_margin"]):
        t = fold["test"] if margin is not None or cv["clamp_margin"] < 0 else fold.get("test_unbounded", fold["test"])
        return {"rows": t["rows"], "rmse": t["rmse"], "mae": t["mae"], "max_abs_error": t["max_abs_error"], "clamped": t.get("clamped")}
    want = -1.0 if margin is None else margin
    for e in fold.get("by_smoothing_and_clamp", []):
        if e["smoothing"] == k and e["clamp_margin"] == want:
            return {"rows": fold["test"]["rows"], "rmse": e["rmse"], "mae": e["mae"], "max_abs_error": e["max_abs_error"], "clamped": None}
    raise MissingScores(f"no scores for smoothing {k}, clamp {margin}")


def weka_summary(raw, out):
    """Weka's per-fold outputs -> {"environment", "sets": {set: {seed: {"fingerprints", "M5P": [..], "REPTree": [..]}}}}."""
    doc = {"environment": open(os.path.join(raw, "environment.txt")).read() if os.path.exists(os.path.join(raw, "environment.txt")) else "",
           "sets": {}}
    for s in sorted(os.listdir(raw)):
        if not os.path.isdir(os.path.join(raw, s)):
            continue
        for sd in sorted(os.listdir(os.path.join(raw, s))):
            d = os.path.join(raw, s, sd)
            if not os.path.exists(os.path.join(d, "folds.json")):
                continue
            fj = json.load(open(os.path.join(d, "folds.json")))
            entry = {"fingerprints": [f["test_rows_fingerprint"] for f in fj["per_fold"]], "M5P": [], "REPTree": []}
            complete = True
            for m in ("M5P", "REPTree"):
                for k in range(len(entry["fingerprints"])):
                    p = os.path.join(d, f"f{k}.{m}.txt")
                    if not os.path.exists(p):
                        complete = False
                        break
                    r = weka(p)
                    try:
                        wall, user, sys_ = open(os.path.join(d, f"f{k}.{m}.time")).read().split()[-3:]
                        r["process_wall_seconds"], r["process_cpu_seconds"] = float(wall), float(user) + float(sys_)
                    except (OSError, ValueError):
                        pass
                    entry[m].append(r)
            if complete:
                doc["sets"].setdefault(s, {})[sd[1:]] = entry
    # Set-seeds an earlier summary holds and these outputs do not are kept (the outputs of an
    # earlier machine are gone; the summary is the record), with that run's environment.
    if os.path.exists(out):
        old = json.load(open(out))
        for s, seeds in old.get("sets", {}).items():
            for sd, entry in seeds.items():
                doc["sets"].setdefault(s, {}).setdefault(sd, entry)
        if old.get("environment") and old["environment"] not in doc["environment"]:
            doc["environment"] = old["environment"] + doc["environment"]
    with open(out, "w") as f:
        f.write(results_json.dumps(doc))
    print(f"weka-summary: {sum(len(v) for v in doc['sets'].values())} set-seeds into {out}")


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
        c = [f.get("clamped", 0) for f in folds]
        out["clamped"] = None if None in c else sum(c)  # (a grid point counts no clamped rows)
    return out


def merge(out, parts):
    """The parts of one --cv run (--cv-folds) into the whole run's metrics."""
    docs = [json.load(open(p)) for p in parts]
    first = docs[0]
    key = lambda d: (d["dataset"], d["backend"], d["seed"], json.dumps(d["params"], sort_keys=True), d["cv"]["folds"],
                     d["cv"]["clamp_margin"], d["cv"].get("smoothing", 0.0))
    for p, d in zip(parts, docs):
        if key(d) != key(first):
            sys.exit(f"gmt_generalisation merge: {p} is a part of another run than {parts[0]}")
    folds = sorted((f for d in docs for f in d["cv"]["per_fold"]), key=lambda f: f["fold"])
    k = first["cv"]["folds"]
    if [f["fold"] for f in folds] != list(range(k)):
        sys.exit(f"gmt_generalisation merge: the parts hold folds {[f['fold'] for f in folds]}, not each of 0..{k - 1} once")
    def scores(records):  # the folds' scores pooled as the renderer pools them
        p = pooled(records)
        return {"rmse": p["rmse"], "mae": p["mae"], "max_abs_error": p["max_abs_error"]}

    cv = {"folds": k, "clamp_margin": first["cv"]["clamp_margin"], "smoothing": first["cv"].get("smoothing", 0.0), **scores([f["test"] for f in folds]),
          "clamped": sum(f["test"].get("clamped", 0) for f in folds)}
    if "unbounded" in first["cv"]:
        cv["unbounded"] = scores([f["test_unbounded"] for f in folds])
    for sweep in ("by_clamp_margin", "by_smoothing_and_clamp"):  # (runs before smoothing have no grid)
        if sweep not in folds[0]:
            continue
        cv[sweep] = []
        for i, e in enumerate(folds[0][sweep]):
            point = {k2: v for k2, v in e.items() if k2 in ("clamp_margin", "smoothing")}
            cv[sweep].append({**point, **scores([dict(f[sweep][i], rows=f["test"]["rows"]) for f in folds])})
    for name, field in (("mean_leaves", "leaves"), ("mean_attributes_in_models", "attributes_in_models"), ("mean_seconds", "seconds")):
        cv[name] = statistics.mean(f[field] for f in folds)
    cv["per_fold"] = folds
    doc = {k2: v for k2, v in first.items() if k2 not in ("cv", "provenance")}
    doc["cv"] = cv
    doc["merged_from"] = [{"folds": d["cv"].get("folds_run"), "provenance": d.get("provenance")} for d in docs]
    if first.get("provenance"):
        doc["provenance"] = first["provenance"]
    with open(out, "w") as f:
        f.write(results_json.dumps(doc))
    print(f"merge: {len(parts)} parts, {k} folds into {out}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "merge":
        if len(sys.argv) < 4:
            sys.exit("usage: gmt_generalisation.py merge OUT.json PART.json...")
        return merge(sys.argv[2], sys.argv[3:])
    if len(sys.argv) > 1 and sys.argv[1] == "weka-summary":
        if len(sys.argv) != 4:
            sys.exit("usage: gmt_generalisation.py weka-summary RAW_DIR OUT.json")
        return weka_summary(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["render"])
    ap.add_argument("--gmt", required=True)
    ap.add_argument("--weka", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    wsum = json.load(open(a.weka))

    gmt = {}  # (tree variant, set) -> {seed: metrics}
    for tv in sorted(os.listdir(a.gmt)):
        if not os.path.isdir(os.path.join(a.gmt, tv)):
            continue
        for sd in sorted(os.listdir(os.path.join(a.gmt, tv))):
            for f in sorted(os.listdir(os.path.join(a.gmt, tv, sd))):
                if f.endswith(".json") and ".part" not in f:  # parts count once merged
                    gmt.setdefault((tv, f[:-5]), {})[int(sd[1:])] = json.load(open(os.path.join(a.gmt, tv, sd, f)))
    # every set either side ran: a set with Weka runs and no GMT run is listed as missing, not dropped
    sets = [s for s in ORDER if any(k[1] == s for k in gmt) or wsum["sets"].get(s)]
    rows, margin_rows, grid_rows, problems = [], [], [], []
    seeds_used = set()
    for s in sets:
        wseeds = sorted(int(k) for k in wsum["sets"].get(s, {}))
        # seeds that both GMT tree variants and Weka have, complete
        seeds = [sd for sd in wseeds if all(sd in gmt.get((tv, s), {}) for tv in ("rule_off", "rule"))]
        for sd in list(seeds):  # a run from before smoothing has no grid for the smoothed variants
            for name, tv, k, margin, _ in VARIANTS:
                try:
                    fold_scores(gmt[(tv, s)][sd], gmt[(tv, s)][sd]["cv"]["per_fold"][0], k, margin)
                except MissingScores as e:
                    problems.append(f"{s} seed {sd}: the {tv} run has {e} (variant '{name}'); not in the table")
                    seeds.remove(sd)
                    break
        for sd in sorted(set(gmt.get(("rule_off", s), {})) | set(gmt.get(("rule", s), {})) | set(wseeds)):
            if sd not in seeds and not any(p.startswith(f"{s} seed {sd}:") for p in problems):
                have = [w for w, ok in (("GMT rule_off", sd in gmt.get(("rule_off", s), {})),
                                        ("GMT rule", sd in gmt.get(("rule", s), {})), ("Weka", sd in wseeds)) if ok]
                problems.append(f"{s} seed {sd}: only {', '.join(have)} ran; not in the table")
        weka = {"M5P": [], "REPTree": []}
        for sd in seeds:
            ws = wsum["sets"][s][str(sd)]
            fps = ws["fingerprints"]
            for tv in ("rule_off", "rule"):
                gf = [f["test_rows_fingerprint"] for f in gmt[(tv, s)][sd]["cv"]["per_fold"]]
                if gf != fps:
                    sys.exit(f"gmt_generalisation: {s} seed {sd}: GMT ({tv}) and Weka ran different folds")
            for m in weka:
                weka[m] += ws[m]
        if not seeds:
            continue
        seeds_used.update(seeds)
        out = {"set": s, "seeds": seeds}
        for m, folds in weka.items():
            out[m] = pooled(folds)
        for name, tv, k, margin, _ in VARIANTS:
            folds = []
            for sd in seeds:
                run = gmt[(tv, s)][sd]
                for f in run["cv"]["per_fold"]:
                    folds.append({**fold_scores(run, f, k, margin), "leaves": f["leaves"], "attrs": f["attributes_in_models"],
                                  # a run that shared the GPU with other study processes says nothing of its speed
                                  "seconds": f["seconds"] if run.get("provenance", {}).get("processes_sharing_the_gpu", 1) == 1 else None})
            out[name] = pooled(folds)
            out[name]["rmse_vs_m5p"] = out[name]["rmse"] / out["M5P"]["rmse"]
        out["REPTree"]["rmse_vs_m5p"] = out["REPTree"]["rmse"] / out["M5P"]["rmse"]
        # the clamp margin sweep (scores of the same trees, pooled over seeds)
        for tv in ("rule_off", "rule"):
            by = {}
            for sd in seeds:
                cv = gmt[(tv, s)][sd]["cv"]
                n = sum(f["test"]["rows"] for f in cv["per_fold"])
                # without smoothing: a run's by_clamp_margin is scored at its own smoothing, which
                # differs between runs of different defaults
                if "by_smoothing_and_clamp" in cv:
                    sweep = [e for e in cv["by_smoothing_and_clamp"] if e["smoothing"] == 0 and e["clamp_margin"] >= 0]
                elif cv.get("smoothing", 0) == 0:
                    sweep = cv["by_clamp_margin"]
                else:
                    problems.append(f"{s} {tv} seed {sd}: no clamp sweep without smoothing; left out of the clamp margin table")
                    continue
                for e in sweep:
                    acc = by.setdefault(e["clamp_margin"], [0.0, 0])
                    acc[0] += e["rmse"] ** 2 * n
                    acc[1] += n
            margin_rows.append({"set": s, "tree": tv, **{str(k): math.sqrt(v[0] / v[1]) / out["M5P"]["rmse"] for k, v in sorted(by.items())}})
        by = {}
        for sd in seeds:
            run = gmt[(SMOOTHING_GRID_TREES, s)][sd]
            n = sum(f["test"]["rows"] for f in run["cv"]["per_fold"])
            for e in run["cv"].get("by_smoothing_and_clamp", []):
                acc = by.setdefault((e["smoothing"], e["clamp_margin"]), [0.0, 0])
                acc[0] += e["rmse"] ** 2 * n
                acc[1] += n
        if by:
            grid_rows.append({"set": s, "tree": SMOOTHING_GRID_TREES,
                              "rmse_vs_m5p": {f"{k:g}/{m:g}": math.sqrt(v[0] / v[1]) / out["M5P"]["rmse"] for (k, m), v in sorted(by.items())}})
        rows.append(out)

    summary = {}
    for name, _, _, _, desc in VARIANTS:
        r = [x[name]["rmse_vs_m5p"] for x in rows]
        lv = [x["M5P"]["leaves"] / x[name]["leaves"] for x in rows]
        summary[name] = {"description": desc, "sets": len(r), "at_most_1.05": sum(v <= 1.05 for v in r),
                         "above_1.25": sum(v > 1.25 for v in r), "max_ratio": max(r) if r else None,
                         "geo_mean_ratio": math.exp(statistics.mean(math.log(v) for v in r)) if r else None,
                         "mean_m5p_rules_per_gmt_leaf": statistics.mean(lv) if lv else None}
    gprov = sorted({(m.get("provenance", {}).get("git_sha", "unknown"), m.get("provenance", {}).get("gpu", "unknown"),
                     m.get("provenance", {}).get("processes_sharing_the_gpu", 1))
                    for runs in gmt.values() for m in runs.values()})
    doc = {"study": "gmt_generalisation", "gmt_provenance": [{"git_sha": g, "gpu": u, "processes_sharing_the_gpu": p} for g, u, p in gprov], "weka_environment": wsum.get("environment", ""),
           "seeds": sorted(seeds_used), "variants":
           [{"name": n, "tree": tv, "smoothing": k, "clamp_margin": m, "description": d} for n, tv, k, m, d in VARIANTS],
           "smoothing_grid": grid_rows,
           "rows": rows, "clamp_margin_sweep": margin_rows, "summary": summary, "problems": problems}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out + ".json", "w") as f:
        f.write(results_json.dumps(doc))

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
    L += ["GMT runs (`scripts/device/gmt.sh generalisation`: `run_experiment --train gmt --dataset SET --cv 10 --cv-only "
          "--seed S --backend cuda --param rows_per_param=R`; trees rule = R 1, rule_off = R 0), by the commit that ran them:", ""]
    for sha, gpu, procs in gprov:
        which = {}
        for (tv, s), runs in gmt.items():
            for sd, m in runs.items():
                pv = m.get("provenance", {})
                if (pv.get("git_sha", "unknown"), pv.get("gpu", "unknown"), pv.get("processes_sharing_the_gpu", 1)) == (sha, gpu, procs):
                    which.setdefault(f"{tv} seed {sd}", []).append(LABEL.get(s, s))
        L.append(f"- {gpu}, commit {sha[:12]}, {procs} study process(es) on the GPU at once: " +
                 "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(which.items())))
    L.append("")
    if wsum.get("environment"):
        L += ["Weka: " + "; ".join(l for l in wsum["environment"].splitlines() if l.strip()) + ".", ""]
    L += [f"Seeds {', '.join(map(str, sorted(seeds_used))) or 'none complete'}; 10 folds each; GMT on the GPU (CUDA fast path), 10,000 iterations, "
          "population 64, defaults except the variant's params; Weka 3.6 M5P `-M 4` and REPTree (defaults) on the folds "
          "exported by `gmt_study_split --folds 10 --seed S` (the same test rows as GMT's `--cv 10 --seed S`: every fold's "
          "test-row fingerprint compared).", "",
          "GMT variants (two sets of trees; smoothing and the clamp change predictions only, so each tree set's runs are "
          "scored every way):", ""]
    L += [f"- **{n}**: {d}" for n, _, _, _, d in VARIANTS]
    L += ["", "## Pooled test RMSE relative to M5P (lower is better)", "",
          "| set | M5P RMSE | REPTree | " + " | ".join(names) + " |", "|---|---:|---:|" + "---:|" * len(names)]
    for x in rows:
        L.append(f"| {LABEL.get(x['set'], x['set'])} | {g(x['M5P']['rmse'])} | {x['REPTree']['rmse_vs_m5p']:.3f} | " +
                 " | ".join(f"{x[n]['rmse_vs_m5p']:.3f}" for n in names) + " |")
    L += ["", "| summary | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for key, label in (("at_most_1.05", "sets at or below 1.05 x M5P"), ("above_1.25", "sets above 1.25 x M5P"),
                       ("max_ratio", "largest ratio"), ("geo_mean_ratio", "geometric mean ratio"),
                       ("mean_m5p_rules_per_gmt_leaf", "M5P rules per GMT leaf (mean over sets)")):
        L.append(f"| {label} | " + " | ".join(f"{summary[n][key]} of {summary[n]['sets']}" if isinstance(summary[n][key], int)
                                               else g(summary[n][key]) for n in names) + " |")
    L += ["", "## Per set: pooled RMSE, MAE, fold RMSE mean ± sd, largest |error|, size, time", "",
          "| set | learner | RMSE | MAE | fold RMSE mean ± sd | max abs error | clamped | leaves / rules | attributes in models | s per fold |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for x in rows:
        for m in ["M5P", "REPTree"] + names:
            v = x[m]
            L.append(f"| {LABEL.get(x['set'], x['set'])} | {m} | {g(v['rmse'])} | {g(v['mae'])} | {g(v['fold_rmse_mean'])} ± "
                     f"{g(v['fold_rmse_sd'])} | {g(v.get('max_abs_error'))} | {'–' if v.get('clamped') is None else v['clamped']} | {g(v['leaves'])} | "
                     f"{g(v['attrs'])} | {g(v['seconds'])} |")
    L += ["", "## Clamp margin without smoothing: pooled RMSE relative to M5P by clamp_margin (the same trees)", ""]
    if margin_rows:
        ms = [k for k in margin_rows[0] if k not in ("set", "tree")]
        L += ["| set | trees | " + " | ".join(ms) + " |", "|---|---|" + "---:|" * len(ms)]
        for r in margin_rows:
            L.append(f"| {LABEL.get(r['set'], r['set'])} | {r['tree']} | " + " | ".join(f"{r[m]:.3f}" for m in ms) + " |")
    if grid_rows:
        keys = list(grid_rows[0]["rmse_vs_m5p"])
        L += ["", f"## Smoothing x clamp: pooled RMSE relative to M5P ({SMOOTHING_GRID_TREES} trees; rows: smoothing k / clamp margin, -1 = no clamp)", ""]
        L += ["| k / margin | " + " | ".join(LABEL.get(r["set"], r["set"]) for r in grid_rows) + " |", "|---|" + "---:|" * len(grid_rows)]
        for c in keys:
            L.append(f"| {c} | " + " | ".join(f"{r['rmse_vs_m5p'].get(c, float('nan')):.3f}" for r in grid_rows) + " |")
        # the grid's summary: per (k, margin), the sets at or below 1.05 and the largest ratio
        L += ["", "| k/margin | sets <= 1.05 x M5P | sets > 1.25 x | largest ratio | geometric mean |", "|---|---:|---:|---:|---:|"]
        for c in keys:
            v = [r["rmse_vs_m5p"][c] for r in grid_rows if c in r["rmse_vs_m5p"]]
            L.append(f"| {c} | {sum(x <= 1.05 for x in v)} of {len(v)} | {sum(x > 1.25 for x in v)} | {max(v):.3f} | "
                     f"{math.exp(statistics.mean(math.log(x) for x in v)):.3f} |")
    L += ["", "Notes:", "",
          "- Times: GMT's are induction seconds per fold on the GPU, over the runs that had the GPU alone (one study "
          "process; runs that shared it count for the scores, not the times), Weka's its own 'Time taken to build model' on the CPU machine named in the Weka environment file; they "
          "are not a speed comparison (Tables 3-4 are).",
          "- Leaves: GMT's mean over folds; M5P's rules; REPTree's leaves. Attributes in models: GMT's and M5P's linear "
          "model terms over all leaves (REPTree has constant leaves).",
          "- Max abs error: the largest |target - prediction| over every test row of every fold and seed (GMT only).",
          "- Clamped: test rows whose prediction the clamp moved, counted by a run for its own params only (its grid "
          "scores the other variants without counting them): '–' where any pooled run scored the variant from its grid.",
          "- Seeds: a seed counts for a set only where both tree sets and Weka have it (seeds with one tree set are listed "
          "below, not in the table); times are from the runs that had the GPU alone."]
    # M5P has wild folds of its own on some sets: a ratio to it flatters GMT there, REPTree is the steadier yardstick
    wild = [x for x in rows if x["M5P"]["fold_rmse_sd"] > x["M5P"]["fold_rmse_mean"]]
    if wild:
        L.append("- M5P's own fold RMSEs spread wider than their mean on " +
                 "; ".join(f"{LABEL.get(x['set'], x['set'])} (fold RMSE {g(x['M5P']['fold_rmse_mean'])} ± {g(x['M5P']['fold_rmse_sd'])}, "
                           f"largest fold {g(max(x['M5P']['fold_rmses']))})" if x["M5P"].get("fold_rmses") else
                           f"{LABEL.get(x['set'], x['set'])} (fold RMSE {g(x['M5P']['fold_rmse_mean'])} ± {g(x['M5P']['fold_rmse_sd'])})"
                           for x in wild) +
                 ": a few folds of wild M5P predictions, so the ratio to M5P flatters GMT there; against REPTree the new "
                 "default's pooled RMSE is " + ", ".join(f"{x['new default']['rmse'] / x['REPTree']['rmse']:.3f} x "
                                                         f"({LABEL.get(x['set'], x['set'])})" for x in wild) + ".")
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
    marks = {"old default": "x", "clamp alone": "^", "rule alone": "v", "rule + clamp": "D", "rule + smoothing": "P",
             "new default": "o", "REPTree": "s"}
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
    for ext in ("png",):  # PNG only: results/ is kept small
        fig.savefig(f"{a.out}.{ext}", dpi=120)


if __name__ == "__main__":
    main()
