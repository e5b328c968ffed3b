#!/usr/bin/env python3
"""Pittsburgh figures from results JSON (Cano, Zafra, Ventura 2014, Figures 5 and 6).

  plots/pitt_figures.py results/h100/pitt_fig5.json [--out plots/out]   -> pitt_fig5.png
  plots/pitt_figures.py results/h200x2/pitt_fig6.json [--out plots/out] -> pitt_fig6.png
  --data: print the extracted series as JSON and draw nothing (no matplotlib needed).

Figure 5: GPops/s (log) against GPops interpreted per case (log), one series per backend
configuration (OpenMP threads, CUDA path x devices). Figure 6, as the paper defines it: the GPUs'
speedup over the single-threaded CPU (OpenMP, 1 thread) per dataset and population, from the
medians of the same run, one bar series per path x devices; the paper's figure is the 2-GPU series,
and a machine with one GPU draws the 1-GPU series and says that the 2-GPU ones were not run.
Estimated values (plot_results.estimated: the tables' *, e.g. CPU times of cases above
cpu_gpops_budget scaled from the first individuals) are drawn hollow, with a legend entry; a
speedup is estimated when either median is. --data gives each point its estimated flag last.
"""
import argparse
import json
import os
import sys
from collections import defaultdict

from plot_results import draw_bars, draw_series, estimated, estimated_legend  # noqa: E402 (beside this script)


def series_name(run):
    p = run.get("params", {})
    if run["backend"] == "cuda":
        return f"{p.get('devices', 1)} GPU {p.get('path', 'fast')}"
    if run["backend"] == "openmp":
        return f"{p.get('threads', 0)} CPU threads"
    return run["backend"]


def ok_runs(doc):
    return [r for r in doc.get("runs", []) if r.get("status") == "ok" and r.get("params", {}).get("mode", "evaluate") == "evaluate"]


def fig5_data(doc):
    s = defaultdict(list)
    for r in ok_runs(doc):
        m = r.get("metrics", {})
        if "gpops" in m and m.get("gpops_per_s"):
            s[series_name(r)].append((m["gpops"], m["gpops_per_s"], r["dataset"]["name"], r["params"].get("population"),
                                      estimated(r)))
    return {k: sorted(v) for k, v in s.items()}


def fig6_data(doc):
    """{"<devices> GPU <path>": [(dataset, population, speedup over 1 CPU thread, estimated)]}."""
    cpu, gpu = {}, {}
    for r in ok_runs(doc):
        p = r["params"]
        key = (r["dataset"]["name"], p.get("population"))
        if r["backend"] == "openmp" and p.get("threads") == 1:
            cpu[key] = r
        elif r["backend"] == "cuda":
            gpu.setdefault((p.get("devices", 1), p.get("path", "fast")), {})[key] = r
    out = {}
    for (dev, path), runs in sorted(gpu.items()):
        pts = [(ds, pop, cpu[(ds, pop)]["timing"]["median"] / r["timing"]["median"], estimated(cpu[(ds, pop)], r))
               for (ds, pop), r in sorted(runs.items()) if (ds, pop) in cpu and r["timing"]["median"]]
        if pts:
            out[f"{dev} GPU {path}"] = pts
    return out


def fig6_not_run(doc, data):
    """The GPU series the config asks for that fig6_data's `data` lacks (e.g. 2 GPUs on a one-GPU
    machine), each with the reason its runs give."""
    reasons = {}
    for r in doc.get("runs", []):
        if r.get("backend") == "cuda":
            reasons.setdefault(f"{r['params'].get('devices', 1)} GPU {r['params'].get('path', 'fast')}", r.get("reason") or r.get("status"))
    return [(name, reasons[name]) for name in sorted(set(reasons) - set(data))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--out", default=None)
    ap.add_argument("--data", action="store_true")
    a = ap.parse_args()
    with open(a.results) as f:
        doc = json.load(f)
    exp = doc["experiment"]["id"]
    kind = "fig6" if exp.startswith("pitt_fig6") else "fig5"
    data = fig6_data(doc) if kind == "fig6" else fig5_data(doc)
    if a.data:
        json.dump({"figure": kind, "series": data}, sys.stdout, indent=2)
        print()
        return 0
    if not data:
        print(f"{a.results}: no ok runs to plot", file=sys.stderr)
        return 1
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is missing (scripts/install-deps.sh installs python3-matplotlib)", file=sys.stderr)
        return 1
    out = a.out or os.path.dirname(os.path.abspath(a.results))
    os.makedirs(out, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if kind == "fig5":
        for name, pts in sorted(data.items()):
            draw_series(ax, [p[0] for p in pts], [p[1] for p in pts], [p[4] for p in pts], "o-", ms=3, label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("GPops interpreted per evaluation")
        ax.set_ylabel("GPops/s")
        ax.set_title("Pittsburgh rule interpreter (cf. Cano et al. 2014, Fig. 5)")
    else:
        labels = sorted({(d, p) for pts in data.values() for d, p, _, _ in pts})
        width = 0.8 / max(1, len(data))
        for i, (name, pts) in enumerate(sorted(data.items())):
            val = {(d, p): s for d, p, s, _ in pts}
            est = {(d, p): e for d, p, _, e in pts}
            draw_bars(ax, [j + i * width for j in range(len(labels))], [val.get(l, 0) for l in labels],
                      [est.get(l, False) for l in labels], width=width, label=name)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(labels))])
        ax.set_xticklabels([f"{d}\n{p}" for d, p in labels], fontsize=6)
        ax.set_yscale("log")
        ax.set_ylabel("speedup over the single-threaded CPU")
        missing = fig6_not_run(doc, data)
        ax.set_title("Pittsburgh evaluation vs 1 CPU thread (cf. Cano et al. 2014, Fig. 6)"
                     + "".join(f"\nnot run here: {name} ({why})" for name, why in missing), fontsize=8)
    estimated_legend(ax, fontsize=7)
    fig.tight_layout()
    for ext in ("png",):  # PNG only: results/ is kept small
        fig.savefig(os.path.join(out, f"{exp}.{ext}"), dpi=150)
    print(os.path.join(out, f"{exp}.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
