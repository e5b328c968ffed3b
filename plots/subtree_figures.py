#!/usr/bin/env python3
"""Subtree-interpreter grid figures from results JSON (configs/subtree_grid.json).

  plots/subtree_figures.py results/h200/subtree_grid.json [--out DIR] [--dataset NAME] [--data]

Writes, for the CUDA interpreters (postfix, mixed, subtree, best) and the CPU baselines:
  subtree_population.png        GPops/s against population, one panel per tree size, one line per
                                interpreter, on one dataset (--dataset, default the largest one run)
  subtree_datasize.png          GPops/s against the rows of each dataset (log-log), one panel per
                                tree size, population = the largest run, one line per interpreter
--data prints the plotted series as JSON and draws nothing (no matplotlib needed).
GPops/s is metrics.gpops_per_s (host wall clock with transfers, the grid table's value).
Estimated points (plot_results.estimated: the grid table's *, e.g. the CPU columns that run a
sample of the rows) are drawn hollow, with a legend entry; --data gives them as [x, GPops/s, true].
"""
import argparse
import json
import os
import sys
from collections import defaultdict

from plot_results import draw_series, estimated, estimated_legend  # noqa: E402 (beside this script)


def label(run):
    b = run["backend"]
    if b == "cuda":
        return "GPU " + run["params"].get("interpreter", "?")
    if b == "openmp":
        return "OpenMP(%s) %s" % (run["params"].get("threads", "?"), run["params"].get("interpreter", ""))
    return "sequential " + run["params"].get("interpreter", "")


def collect(runs, dataset):
    ok = [r for r in runs if r.get("status") == "ok" and "gpops_per_s" in r.get("metrics", {})]
    rows = {r["dataset"]["name"]: r["dataset"]["rows"] for r in ok}
    if not ok:
        raise SystemExit("subtree_figures: no ok runs with metrics.gpops_per_s")
    if dataset is None:
        dataset = max(rows, key=lambda n: rows[n])
    if dataset not in rows:
        raise SystemExit("subtree_figures: dataset '%s' has no ok run (have: %s)" % (dataset, ", ".join(sorted(rows))))
    pops = sorted({r["params"]["population"] for r in ok})
    pop_max = pops[-1]
    by_pop = defaultdict(lambda: defaultdict(list))   # tree_size -> label -> [(pop, gpops, estimated)]
    by_rows = defaultdict(lambda: defaultdict(list))  # tree_size -> label -> [(rows, gpops, estimated)]
    for r in ok:
        ts, lab, g, e = r["params"]["tree_size"], label(r), r["metrics"]["gpops_per_s"], estimated(r)
        if r["dataset"]["name"] == dataset:
            by_pop[ts][lab].append((r["params"]["population"], g, e))
        # CPU columns run a sample of the rows (estimate_sample_rows): plot them against the rows they evaluated.
        if r["params"]["population"] == pop_max:
            by_rows[ts][lab].append((r["metrics"].get("rows_evaluated", r["dataset"]["rows"]), g, e))
    norm = lambda d: {str(ts): {lab: sorted(v) for lab, v in sorted(s.items())} for ts, s in sorted(d.items())}
    return dataset, rows[dataset], pop_max, norm(by_pop), norm(by_rows)


def draw(series, xlabel, title, path_base, logx, formats):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sizes = list(series)
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 3.8), sharey=True, squeeze=False)
    for ax, ts in zip(axes[0], sizes):
        for lab, pts in series[ts].items():
            xs, ys, est = zip(*pts)
            draw_series(ax, xs, ys, est, "-o", ms=3, label=lab)
        ax.set_title("tree size %s" % ts)
        ax.set_yscale("log")
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3, which="both")
    axes[0][0].set_ylabel("GPops/s (with transfers)")
    estimated_legend(axes[0][-1], covers=list(axes[0]), fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    out = []
    for f in formats:
        p = path_base + "." + f
        fig.savefig(p, dpi=130)
        out.append(p)
    plt.close(fig)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--out", default=None, help="output folder (default: <results folder>/plots)")
    ap.add_argument("--dataset", default=None)
    ap.add_argument("--formats", default="png")  # results/ keeps PNG only (size)
    ap.add_argument("--data", action="store_true")
    a = ap.parse_args()
    try:
        with open(a.results) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("subtree_figures: %s: %s" % (a.results, e))
    ds, ds_rows, pop_max, by_pop, by_rows = collect(doc.get("runs", []), a.dataset)
    if a.data:
        json.dump({"dataset": ds, "rows": ds_rows, "population_for_datasize": pop_max,
                   "by_population": by_pop, "by_rows": by_rows}, sys.stdout, indent=1)
        print()
        return
    out = a.out or os.path.join(os.path.dirname(os.path.abspath(a.results)), "plots")
    os.makedirs(out, exist_ok=True)
    fm = a.formats.split(",")
    made = draw(by_pop, "population", "Subtree grid: GPops/s vs population (%s, %s rows)" % (ds, format(ds_rows, ",")),
                os.path.join(out, "subtree_population"), False, fm)
    made += draw(by_rows, "rows evaluated", "Subtree grid: GPops/s vs data size (population %d)" % pop_max,
                 os.path.join(out, "subtree_datasize"), True, fm)
    for p in made:
        print(p)


if __name__ == "__main__":
    main()
