#!/usr/bin/env python3
"""Figures 8-11 of Marron et al. 2014 from vfdt results JSON (results/<gpu>/vfdt_fig*.json).

Figs 8-10: prequential learning curves (metrics.curve: instances, cumulative and windowed
accuracy) of the exact streaming forest (sequential, B=1) and the GPU's mini-batches.
Fig 11: forest running time vs number of REC instances (OpenMP(16) vs GPU).
MOA's OzaBagAdwin forest (results/cpu/moa_vfdt.json, scripts/peers/moa_vfdt.sh) is drawn beside
ours where it ran the same stream in full: its windowed accuracy in Figs 8-10, its own evaluation
clock against instances in Fig 11 (measured on the CPU machine, not the GPU machine).
Writes <out>/vfdt_fig<N>.png with matplotlib when it is installed, and always
<out>/vfdt_fig<N>.csv with the plotted series. A Fig. 11 time from an estimated run
(plot_results.estimated) is drawn hollow with a legend entry, and vfdt_fig11.csv says so in its
"estimated" column (true/false); the learning curves are measured accuracies, never estimated.

  python3 plots/vfdt_figures.py results/h100 -o plots/h100
"""
import argparse
import csv
import json
import os


from plot_results import csv_value, draw_series, estimated, estimated_legend, load, ok_runs  # noqa: E402 (beside this script)


def label(run):
    b = run.get("params", {}).get("batch")
    return f"{run['backend']} B={b}" + (" (exact streaming)" if b == 1 else "")


def curves(doc):
    out = []
    for r in ok_runs(doc):
        c = r.get("metrics", {}).get("curve")
        if c:
            out.append((label(r), c["instances"], c["accuracy"], c["window_accuracy"]))
    return out


def moa_forest(moa, dataset):
    """MOA's forest run over the whole stream named by `dataset` (name and options; a "rows" option,
    a shorter stream of the same generator, is ignored: MOA's run is the whole stream), or None."""
    opts = {k: v for k, v in dataset.get("options", {}).items() if k != "rows"}
    for m in (moa or {}).get("runs", []):
        if (m["mode"] == "forest" and m.get("forest") == "ozabag_adwin" and m["dataset"] == dataset["name"]
                and m.get("options", {}) == opts and m["instances"] == m["total_rows"]):
            return m
    return None


MOA_LABEL = "MOA OzaBagAdwin, 100 trees"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="folder with vfdt_fig*.json")
    ap.add_argument("-o", "--out", default="plots/out")
    ap.add_argument("--moa", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results", "cpu", "moa_vfdt.json"),
                    help="MOA's runs (default results/cpu/moa_vfdt.json; drawn where they match)")
    a = ap.parse_args()
    moa = json.load(open(a.moa)) if os.path.exists(a.moa) else None
    os.makedirs(a.out, exist_ok=True)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
        print("vfdt_figures: matplotlib not installed; writing CSV series only")
    titles = {8: "Covertypes (surrogate)", 9: "REC (surrogate)", 10: "RT"}
    for n, title in titles.items():
        doc = load(a.results, f"vfdt_fig{n}")
        if not doc:
            continue
        series = curves(doc)
        runs = ok_runs(doc)
        m = moa_forest(moa, runs[0]["dataset"]) if runs else None
        if m and m["total_rows"] != runs[0]["dataset"]["rows"]:
            m = None  # our stream is shorter (a smoke run): not the curve MOA drew
        if m:
            series.append((MOA_LABEL, m["curve"]["instances"], m["curve"]["accuracy"], m["curve"]["window_accuracy"]))
        with open(os.path.join(a.out, f"vfdt_fig{n}.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["series", "instances", "cumulative_accuracy_pct", "window_accuracy_pct"])
            for name, xs, acc, win in series:
                for x, y, z in zip(xs, acc, win):
                    w.writerow([name, x, y, z])
        if plt:
            fig, ax = plt.subplots(figsize=(7, 4))
            for name, xs, acc, win in series:
                moa_line = name == MOA_LABEL
                ax.plot(xs, win, label=name + " (window)", color="black" if moa_line else None,
                        linestyle="--" if moa_line else "-")
            ax.set_xlabel("instances")
            ax.set_ylabel("accuracy % (sliding window)")
            ax.set_title(f"Fig. {n}: random forest learning curve, {title}")
            ax.legend(fontsize=8)
            ax.grid(alpha=0.3)
            for ext in ("png",):  # PNG only: results/ is kept small
                fig.savefig(os.path.join(a.out, f"vfdt_fig{n}.{ext}"), dpi=120, bbox_inches="tight")
            plt.close(fig)
    doc = load(a.results, "vfdt_fig11")
    if doc:
        pts = {}
        for r in ok_runs(doc):
            # the faithful path (the paper's design) is its own series beside the fast path
            path = r["params"].get("path", "default")
            name = r["backend"] + ("" if path == "default" else " " + path)
            pts.setdefault(name, []).append((r["dataset"]["rows"], r["timing"]["median"], estimated(r)))
        # MOA's clock along its run over the whole stream: the time of its first N instances (ours
        # are streams of N rows of the same generator)
        m = moa_forest(moa, ok_runs(doc)[0]["dataset"]) if ok_runs(doc) else None
        if m and m["curve"].get("eval_cpu_s"):
            pts[MOA_LABEL + " (CPU machine, its clock, along its whole-stream run)"] = [
                (x, y, False) for x, y in zip(m["curve"]["instances"], m["curve"]["eval_cpu_s"])]
        with open(os.path.join(a.out, "vfdt_fig11.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["backend", "instances", "seconds_median", "estimated"])
            for b, p in pts.items():
                for x, y, e in sorted(p):
                    w.writerow([b, x, y, csv_value(e)])
        if plt:
            fig, ax = plt.subplots(figsize=(6, 4))
            for b, p in pts.items():
                p.sort()
                draw_series(ax, [x for x, _, _ in p], [y for _, y, _ in p], [e for _, _, e in p], "-",
                            marker="o" if len(p) < 30 else None, label=b)
            ax.set_xlabel("REC instances")
            ax.set_ylabel("seconds (median)")
            ax.set_yscale("log")
            ax.set_title("Fig. 11: forest of 100, time vs instances")
            estimated_legend(ax, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)  # below: the lines fill the axes
            ax.grid(alpha=0.3)
            for ext in ("png",):  # PNG only: results/ is kept small
                fig.savefig(os.path.join(a.out, f"vfdt_fig11.{ext}"), dpi=120, bbox_inches="tight")
            plt.close(fig)


if __name__ == "__main__":
    main()
