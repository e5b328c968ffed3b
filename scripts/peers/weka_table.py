#!/usr/bin/env python3
"""Builds the GMT vs Weka table from scripts/peers/weka_study.sh's raw outputs.

usage: weka_table.py OUT_DIR   (reads OUT_DIR/raw, writes OUT_DIR/table.csv and table.md)
Weka: RMSE/MAE from '=== Error on test data ===', size from 'Number of Rules' (M5P) or the leaf
lines (REPTree), attributes in models = terms with '*' in M5P's LM blocks, time = 'Time taken to
build model'. GMT: the metrics JSON written by gmt_learner.
"""
import csv
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from weka_output import weka  # noqa: E402

out = sys.argv[1]
raw = os.path.join(out, "raw")
# A GMT-only study (weka_study.sh SKIP_WEKA=1) names the folder whose Weka outputs it shares in
# raw/weka_from.txt (repository-relative) instead of keeping copies of them.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
weka_raw = raw
if os.path.exists(os.path.join(raw, "weka_from.txt")):
    with open(os.path.join(raw, "weka_from.txt")) as f:
        weka_raw = os.path.join(ROOT, f.read().strip(), "raw")


def gmt(path):
    j = json.load(open(path))
    return {"rmse": j["test"]["rmse"], "mae": j["test"]["mae"], "seconds": j["induction_seconds"],
            "leaves": j["leaves"], "attrs": j["attributes_in_models"], "train_rows": j["train"]["rows"],
            "iterations": j["iterations"], "stop": j.get("stop_reason")}


names = sorted({f.split(".")[0] for f in os.listdir(raw) if f.endswith(".gmt_metrics.json")})
order = ["armchair10k", "pol", "elevators", "cal_housing", "house16h", "house8l", "2dplanes", "fried", "mv", "elnino"]
names = [n for n in order if n in names] + [n for n in names if n not in order]
def cpu(path):
    try:
        wall, user, sys_ = open(path).read().split()[-3:]
        return float(user) + float(sys_)
    except (OSError, ValueError):
        return None


rows = []
for n in names:
    g = gmt(os.path.join(raw, n + ".gmt_metrics.json"))
    m5 = weka(os.path.join(weka_raw, n + ".M5P.txt"))
    rep = weka(os.path.join(weka_raw, n + ".REPTree.txt"))
    g["cpu"] = cpu(os.path.join(raw, n + ".gmt.time"))
    m5["cpu"] = cpu(os.path.join(weka_raw, n + ".M5P.time"))
    rep["cpu"] = cpu(os.path.join(weka_raw, n + ".REPTree.time"))
    rows.append((n, g, m5, rep))

fields = ["dataset", "train_rows"]
for k in ("gmt", "m5p", "reptree"):
    fields += [f"{k}_rmse", f"{k}_mae", f"{k}_leaves", f"{k}_attributes_in_models", f"{k}_seconds", f"{k}_process_cpu_seconds"]
fields += ["gmt_iterations", "gmt_stop_reason"]
with open(os.path.join(out, "table.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(fields)
    for n, g, m5, rep in rows:
        line = [n, g["train_rows"]]
        for r in (g, m5, rep):
            line += [r["rmse"], r["mae"], r["leaves"], r["attrs"], r["seconds"], r["cpu"]]
        line += [g["iterations"], g["stop"] or ""]
        w.writerow(line)

env = open(os.path.join(raw, "environment.txt")).read().strip().splitlines()


def fmt(v, p=4):
    return "—" if v is None else (f"{v:.{p}g}" if isinstance(v, float) else str(v))


md = ["# GMT vs Weka M5P and REPTree (test RMSE, tree size, induction time)", ""]
md += ["Measured by `scripts/peers/weka_study.sh`; every method sees the same seeded 2/3 train, 1/3 test split.", ""]
md += ["```"] + env + ["```", ""]
md += ["| dataset | train rows | GMT RMSE | M5P RMSE | REPTree RMSE | GMT leaves / attrs | M5P rules / attrs | REPTree leaves | GMT iterations | GMT s (CPU s) | M5P s (CPU s) | REPTree s (CPU s) |",
       "|---|---|---|---|---|---|---|---|---|---|---|---|"]
for n, g, m5, rep in rows:
    best = min(x["rmse"] for x in (g, m5, rep) if x["rmse"] is not None)
    cell = lambda r: ("**" + fmt(r["rmse"]) + "**") if r["rmse"] == best else fmt(r["rmse"])
    md.append(f"| {n} | {g['train_rows']} | {cell(g)} | {cell(m5)} | {cell(rep)} | {g['leaves']} / {g['attrs']} | "
              f"{m5['leaves']} / {m5['attrs']} | {rep['leaves']} | {g['iterations']}{(' (' + g['stop'] + ')') if g['stop'] else ''} | {fmt(g['seconds'], 3)} ({fmt(g['cpu'], 3)}) | {fmt(m5['seconds'], 3)} ({fmt(m5['cpu'], 3)}) | {fmt(rep['seconds'], 3)} ({fmt(rep['cpu'], 3)}) |")
md += ["", "GMT iterations (stop reason): stall = no improvement of the best for stall_iterations generations "
       "(default off since 2026-11-23; the study committed under results/h200/gmt_weka_study ran with the earlier default 1,000), "
       "iterations = the iteration limit, time = the max_seconds cap (MAX_SECONDS); no reason = a run before stop reasons were recorded.", ""]
md += ["", "Paper (cuGMT Sec. 6, Armchair): GMT 5 leaf models, RMSE < 0.1; M5 18 models, RMSE 2.33; REPTree 87 leaves, RMSE 1.48 "
       "(their Armchair definition is not public; ours is the datasets/ reconstruction, noise sd 0.05).", ""]
open(os.path.join(out, "table.md"), "w").write("\n".join(md) + "\n")
print("\n".join(md))
