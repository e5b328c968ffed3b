#!/usr/bin/env python3
"""GMT figures from results JSON (Jurczuk, Czajkowski, Kretowski 2022, Figures 15-18).

  python3 plots/gmt_figures.py results/h200 [-o results/h200/plots] [--data]

Reads gmt_table3.json (Fig. 15: run-time breakdown of six real-life datasets), gmt_table4.json
(Fig. 16: speedup over sequential vs samples; Fig. 17: breakdown vs samples), gmt_fig18.json
(Fig. 18: (a) speedup vs attributes for Armchair 100K and 1M, (b) breakdown for 100K) and, when
present, ceilings.json (the device's measured copy bandwidth: the data passes' GB/s as a share
of it). Writes <out>/gmt_fig<N>.png when matplotlib is installed and always
<out>/gmt_fig<N>.csv with the plotted series, and <out>/gmt_bandwidth.csv. --data prints the
series as JSON and draws nothing.

Estimated values (plot_results.estimated): a breakdown or bandwidth row of an estimated run, and a
speedup with an estimated operand (sequential or the series' run), carry estimated true (CSV
column "estimated"); the figures draw them hollow (bars hollow and dotted), with a legend entry.
gmt_fig16.csv and gmt_fig18a.csv hold one row per point: dataset, rows / attributes, series,
speedup, estimated.
"""
import argparse
import csv
import json
import os
import sys

PHASES = ["cpu_ea", "flattening", "transfers", "redistribute", "separate", "reorganize", "calc_models",
          "estimate_errors", "exact_solver", "repair", "reduction"]
FIG15_SETS = ["pol", "colorhistogram", "colormoments", "cooctexture", "layout", "year_prediction_msd"]
NAMES = {"pol": "Pol", "colorhistogram": "Colorhist.", "colormoments": "Colormom.", "cooctexture": "Cooctex.",
         "layout": "Layout", "year_prediction_msd": "Year", "armchair10k": "10K", "armchair50k": "50K",
         "armchair100k": "100K", "armchair500k": "500K", "armchair1m": "1M", "armchair5m": "5M", "armchair10m": "10M"}
ROWS = {"armchair10k": 1e4, "armchair50k": 5e4, "armchair100k": 1e5, "armchair500k": 5e5, "armchair1m": 1e6,
        "armchair5m": 5e6, "armchair10m": 1e7}
HERE = os.path.dirname(os.path.abspath(__file__))
PAPER4 = os.path.join(HERE, "..", "experiments", "paper_tables", "gmt_table4_armchair_times.csv")


from plot_results import draw_bars, draw_series, estimated, estimated_legend, load, ok_runs, write_csv  # noqa: E402 (beside this script)


def series(run):
    """GPU fast | GPU faithful | OpenMP 16 | sequential."""
    b = run["backend"]
    if b == "cuda":
        return "GPU " + run.get("params", {}).get("gpu_path", "fast")
    if b == "openmp":
        return f"OpenMP {run.get('params', {}).get('threads', 0)}"
    return b


def shares(run):
    """Per-phase share of the run's summed phase time (the paper's breakdown: percent of run time)."""
    bd = run.get("breakdown", {})
    secs = {p: bd.get(p, {}).get("seconds", 0.0) for p in PHASES}
    total = sum(secs.values())
    return {p: (100.0 * s / total if total > 0 else 0.0) for p, s in secs.items()}


def runs_by_key(doc):
    """(dataset name, options json, series) -> the run (its time: timing.median)."""
    out = {}
    for r in ok_runs(doc):
        key = (r["dataset"]["name"], json.dumps(r["dataset"].get("options", {}), sort_keys=True), series(r))
        out[key] = r
    return out


def speedup(seq, run):
    """The sequential run's median over run's, and whether either is estimated."""
    return seq["timing"]["median"] / run["timing"]["median"], estimated(seq, run)


def fig15(doc):
    rows = []
    for r in ok_runs(doc):
        if r["backend"] == "cuda" and r["dataset"]["name"] in FIG15_SETS:
            rows.append({"dataset": r["dataset"]["name"], "series": series(r), **shares(r), "estimated": estimated(r)})
    rows.sort(key=lambda x: (FIG15_SETS.index(x["dataset"]), x["series"]))
    return rows


def paper_speedups():
    out = {}
    if not os.path.exists(PAPER4):
        return out
    with open(PAPER4) as f:
        for row in csv.DictReader(f):
            seq = float(row["sequential_s"])
            out[row["dataset"].lower()] = {"paper RTX 2080 Ti": seq / float(row["rtx2080ti_s"]),
                                           "paper OpenMP": seq / float(row["openmp_s"])}
    return out


def fig16(doc):
    """One row per point: dataset, rows, series, speedup over sequential, estimated."""
    runs = runs_by_key(doc)
    rows = []
    paper = paper_speedups()
    for name, n in sorted(ROWS.items(), key=lambda kv: kv[1]):
        seq = next((r for (d, _, s), r in runs.items() if d == name and s == "sequential"), None)
        for (d, _, s), r in runs.items():
            if d == name and s != "sequential" and seq and seq["timing"]["median"]:
                v, est = speedup(seq, r)
                rows.append({"dataset": name, "rows": n, "series": s, "speedup": v, "estimated": est})
        for s, v in paper.get(name, {}).items():
            rows.append({"dataset": name, "rows": n, "series": s, "speedup": v, "estimated": False})
    return rows


def fig17(doc):
    rows = []
    for r in ok_runs(doc):
        if r["backend"] == "cuda" and r["dataset"]["name"] in ROWS:
            rows.append({"dataset": r["dataset"]["name"], "rows": ROWS[r["dataset"]["name"]], "series": series(r), **shares(r),
                         "estimated": estimated(r)})
    rows.sort(key=lambda x: (x["rows"], x["series"]))
    return rows


def fig18(doc):
    """(speedups: one row per point: dataset, attributes, series, speedup, estimated; breakdown rows)."""
    runs = runs_by_key(doc)
    speed, brk = [], []
    keys = {(d, o) for (d, o, _) in runs}
    for d, o in sorted(keys):
        attrs = 2 + json.loads(o).get("noise_attributes", 0)
        seq = runs.get((d, o, "sequential"))
        for (dd, oo, s), r in runs.items():
            if (dd, oo) == (d, o) and s != "sequential" and seq and seq["timing"]["median"]:
                v, est = speedup(seq, r)
                speed.append({"dataset": d, "attributes": attrs, "series": s, "speedup": v, "estimated": est})
    for r in ok_runs(doc):
        if r["backend"] == "cuda" and r["dataset"]["name"] == "armchair100k":
            brk.append({"attributes": 2 + r["dataset"].get("options", {}).get("noise_attributes", 0), "series": series(r), **shares(r),
                        "estimated": estimated(r)})
    speed.sort(key=lambda x: (x["dataset"], x["attributes"]))
    brk.sort(key=lambda x: (x["series"], x["attributes"]))
    return speed, brk


def copy_bandwidth(folder):
    doc = load(folder, "ceilings")
    for r in ok_runs(doc):
        if r["backend"] == "cuda" and r.get("params", {}).get("probe") == "copy_bandwidth":
            return r.get("metrics", {}).get("bytes_per_s")
    return None


def bandwidth(docs, folder):
    bw = copy_bandwidth(folder)
    rows = []
    for doc in docs:
        for r in ok_runs(doc):
            if r["backend"] != "cuda":
                continue
            m = r.get("metrics", {})
            g = m.get("data_pass_gb_per_s")
            if g is None:
                continue
            rows.append({"experiment": doc["experiment"]["id"], "dataset": r["dataset"]["name"],
                         "options": json.dumps(r["dataset"].get("options", {}), sort_keys=True), "series": series(r),
                         "rows": r["dataset"].get("rows"), "data_pass_gb_per_s": g,
                         "percent_of_copy": (100.0 * g * 1e9 / bw) if bw else None,
                         "ms_per_evaluation": 1e3 * m.get("seconds_per_evaluation", 0.0), "estimated": estimated(r)})
    return rows, bw


def stacked(ax, labels, rows, title):
    """Stacked phase shares, one bar per row; an estimated row's bar hollow."""
    bottom = [0.0] * len(rows)
    est = [r.get("estimated", False) for r in rows]
    for p in PHASES:
        vals = [r.get(p, 0.0) for r in rows]
        draw_bars(ax, range(len(rows)), vals, est, bottom=bottom, label=p)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=7, rotation=30, ha="right")
    ax.set_ylabel("% of run time")
    ax.set_title(title, fontsize=9)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="folder with gmt_table3.json, gmt_table4.json, gmt_fig18.json")
    ap.add_argument("-o", "--out", default=None)
    ap.add_argument("--data", action="store_true")
    a = ap.parse_args()
    t3, t4, f18 = load(a.results, "gmt_table3"), load(a.results, "gmt_table4"), load(a.results, "gmt_fig18")
    data = {"fig15": fig15(t3), "fig16": fig16(t4), "fig17": fig17(t4)}
    data["fig18a"], data["fig18b"] = fig18(f18)
    data["bandwidth"], bw = bandwidth([d for d in (t3, t4, f18) if d], a.results)
    if a.data:
        json.dump(data, sys.stdout, indent=2)
        print()
        return 0
    out = a.out or os.path.join(a.results, "plots")
    os.makedirs(out, exist_ok=True)
    for k, rows in data.items():
        write_csv(os.path.join(out, f"gmt_{k}.csv"), rows)
    if bw:
        print(f"gmt_figures: device copy bandwidth {bw / 1e9:.0f} GB/s (ceilings.json)")
    for r in data["bandwidth"]:
        pct = f"{r['percent_of_copy']:.0f} % of copy" if r["percent_of_copy"] is not None else "no ceilings.json"
        print(f"  {r['experiment']:11s} {r['dataset']:22s} {r['series']:13s} {r['data_pass_gb_per_s']:8.0f} GB/s  {pct}  "
              f"{r['ms_per_evaluation']:.3f} ms/evaluation" + ("  (estimated)" if r["estimated"] else ""))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("gmt_figures: matplotlib not installed; wrote the CSV series only", file=sys.stderr)
        return 0
    made = []

    def save(fig, name):
        fig.tight_layout()
        for ext in ("png",):  # PNG only: results/ is kept small
            fig.savefig(os.path.join(out, f"{name}.{ext}"), dpi=150)
        plt.close(fig)
        made.append(name)

    if data["fig15"]:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        rows = data["fig15"]
        stacked(ax, [f"{NAMES.get(r['dataset'], r['dataset'])}\n{r['series']}" for r in rows], rows,
                "Run-time breakdown, real-life datasets (cf. Fig. 15)")
        estimated_legend(ax, fontsize=6, bbox_to_anchor=(1.01, 1), loc="upper left")
        save(fig, "gmt_fig15")
    if data["fig16"]:
        fig, ax = plt.subplots(figsize=(6.5, 4.2))
        names = sorted({r["series"] for r in data["fig16"]})
        for s in names:
            pts = [r for r in data["fig16"] if r["series"] == s]
            draw_series(ax, [p["rows"] for p in pts], [p["speedup"] for p in pts], [p["estimated"] for p in pts],
                        "--o" if s.startswith("paper") else "-o", ms=3, label=s)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("Armchair training rows")
        ax.set_ylabel("speedup over sequential")
        ax.set_title("Speedup vs samples (cf. Fig. 16)", fontsize=9)
        estimated_legend(ax, fontsize=7)
        save(fig, "gmt_fig16")
    if data["fig17"]:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        rows = data["fig17"]
        stacked(ax, [f"{NAMES.get(r['dataset'], r['dataset'])}\n{r['series']}" for r in rows], rows,
                "Run-time breakdown vs samples (cf. Fig. 17)")
        estimated_legend(ax, fontsize=6, bbox_to_anchor=(1.01, 1), loc="upper left")
        save(fig, "gmt_fig17")
    if data["fig18a"] or data["fig18b"]:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
        for d in sorted({r["dataset"] for r in data["fig18a"]}):
            for s in ("GPU fast", "GPU faithful", "OpenMP 16"):
                pts = [r for r in data["fig18a"] if r["dataset"] == d and r["series"] == s]
                if pts:
                    draw_series(ax1, [p["attributes"] for p in pts], [p["speedup"] for p in pts], [p["estimated"] for p in pts],
                                "-o", ms=3, label=f"{NAMES.get(d, d)} {s}")
        ax1.set_yscale("log")
        ax1.set_xlabel("attributes")
        ax1.set_ylabel("speedup over sequential")
        ax1.set_title("(a) speedup vs attributes (cf. Fig. 18a)", fontsize=9)
        estimated_legend(ax1, fontsize=6)
        rows = data["fig18b"]
        if rows:
            stacked(ax2, [f"{r['attributes']}\n{r['series']}" for r in rows], rows, "(b) breakdown, Armchair 100K (cf. Fig. 18b)")
            estimated_legend(ax2, fontsize=5, bbox_to_anchor=(1.01, 1), loc="upper left")
        save(fig, "gmt_fig18")
    for m in made:
        print(os.path.join(out, m + ".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
