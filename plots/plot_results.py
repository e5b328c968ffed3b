#!/usr/bin/env python3
"""Results JSON (schema 1) -> figures (PNG and SVG), for any family.

  plots/plot_results.py results/h100/ceilings.json [--out DIR] [--formats png,svg]
                        [--metric metrics.display_value] [--x params.population] [--data]

Figures, each written when the results hold what it needs:
  <exp>_time.{png,svg}       bars: median wall time per case (x) and backend (bars), min-max whiskers, log scale
  <exp>_speedup.{png,svg}    bars: speedup over the sequential run of the same case (ratio of medians of
                             the same results file; never across machines)
  <exp>_scaling.{png,svg}    lines: median time against a swept numeric param (--x, or the first
                             numeric param with >= 3 values), one line per backend (x dataset)
  <exp>_breakdown.{png,svg}  stacked bars: per-run phase seconds (breakdown), device-clock phases hatched
  <exp>_metric.{png,svg}     bars: --metric (a dotted path into each run) per case and backend
                             (default: metrics.display_value when present, as in ceilings.json)
--data prints the extracted series as JSON and draws nothing (no matplotlib needed).
Only runs with status "ok" are drawn; skipped/failed runs are listed on stderr.
"""
import argparse
import json
import math
import os
import sys
import textwrap
from collections import OrderedDict

BACKEND_ORDER = ["sequential", "openmp", "cuda"]
# Params that choose how a backend runs, not what is computed: they are part of the backend's label.
BACKEND_ONLY = {"threads", "devices", "path"}


def get_path(obj, path):
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def load(folder, name):
    """The results document folder/name.json, or None when the file is not there."""
    path = os.path.join(folder, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def ok_runs(doc):
    runs = (doc or {}).get("runs", [])
    for r in runs:
        if r.get("status") != "ok":
            print(f"plot_results: not drawn: {r.get('backend')} {get_path(r, 'dataset.name')} "
                  f"{json.dumps(r.get('params', {}), sort_keys=True)}: {r.get('status')} {r.get('reason', '')}",
                  file=sys.stderr)
    return [r for r in runs if r.get("status") == "ok"]


def varying_params(runs):
    """Case-defining params whose value differs between runs (sorted)."""
    values = {}
    for r in runs:
        for k, v in r.get("params", {}).items():
            if k in BACKEND_ONLY:
                continue
            values.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    return sorted(k for k, v in values.items() if len(v) > 1)


def case_label(run, varying, exclude=()):
    name = get_path(run, "dataset.display_name") or get_path(run, "dataset.name") or "?"
    parts = [] if name in ("none", "?") and varying else [str(name)]
    for k in varying:
        if k in exclude:
            continue
        v = run.get("params", {}).get(k)
        parts.append(str(v) if len(varying) == 1 and not parts else f"{k}={v}")
    if run.get("seed") not in (None, 1):
        parts.append(f"seed={run['seed']}")
    return " ".join(parts) if parts else "case"


def backend_label(run):
    p = run.get("params", {})
    extra = [f"{k}={p[k]}" for k in sorted(BACKEND_ONLY) if k in p and p[k] not in (0, None, "")]
    return run["backend"] + (" (" + ", ".join(extra) + ")" if extra else "")


def backend_key(label):
    base = label.split(" ")[0]
    return (BACKEND_ORDER.index(base) if base in BACKEND_ORDER else len(BACKEND_ORDER), label)


def grouped(runs, value_fn, exclude=(), unit_path=None):
    """OrderedDict case -> {backend label: value} over runs where value_fn gives a number.
    unit_path: a per-run unit (e.g. metrics.display_unit) appended to the case label."""
    varying = varying_params(runs)
    out = OrderedDict()
    for r in runs:
        v = value_fn(r)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            continue
        label = case_label(r, varying, exclude)
        unit = get_path(r, unit_path) if unit_path else None
        if unit:
            label += f"\n({unit})"
        out.setdefault(label, {})[backend_label(r)] = v
    return out


def time_series(runs):
    med = grouped(runs, lambda r: get_path(r, "timing.median"))
    lo = grouped(runs, lambda r: get_path(r, "timing.min"))
    hi = grouped(runs, lambda r: get_path(r, "timing.max"))
    return {"median": med, "min": lo, "max": hi}


def speedup_series(runs):
    """case -> {backend: median(sequential) / median(backend)} for cases with a sequential run."""
    med = grouped(runs, lambda r: get_path(r, "timing.median"))
    out = OrderedDict()
    for case, by_backend in med.items():
        base = by_backend.get("sequential")
        if not base:
            continue
        out[case] = {b: base / t for b, t in by_backend.items() if b != "sequential" and t > 0}
        if not out[case]:
            del out[case]
    return out


def scaling_series(runs, x=None):
    """(param, {line label: [(x, median)]}) for a numeric param with >= 3 values, else (None, {})."""
    if x is None:
        for k in varying_params(runs):
            vals = {r["params"].get(k) for r in runs if k in r.get("params", {})}
            if len(vals) >= 3 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
                x = k
                break
    elif x.startswith("params."):
        x = x[len("params."):]
    if x is None:
        return None, {}
    varying = [k for k in varying_params(runs) if k != x]
    lines = OrderedDict()
    for r in runs:
        xv, t = r.get("params", {}).get(x), get_path(r, "timing.median")
        if xv is None or t is None:
            continue
        label = backend_label(r)
        case = case_label(r, varying)
        if len({case_label(q, varying) for q in runs}) > 1:
            label += " / " + case
        lines.setdefault(label, []).append((xv, t))
    for v in lines.values():
        v.sort()
    return x, lines


def breakdown_series(runs):
    """[(run label, [(phase, seconds, clock)])] for runs with a breakdown."""
    varying = varying_params(runs)
    out = []
    for r in runs:
        b = r.get("breakdown") or {}
        phases = [(k, v.get("seconds", 0.0), v.get("clock", "host")) for k, v in b.items() if isinstance(v, dict)]
        if phases:
            out.append((backend_label(r) + "\n" + case_label(r, varying), phases))
    return out


def metric_series(runs, metric):
    unit = "metrics.display_unit" if metric == "metrics.display_value" else None
    return grouped(runs, lambda r: get_path(r, metric), unit_path=unit)


def default_metric(runs):
    for r in runs:
        if get_path(r, "metrics.display_value") is not None:
            return "metrics.display_value"
    return None


# ---------------------------------------------------------------------------------------------
def grouped_bars(ax, series, log=False, err=None):
    cases = list(series.keys())
    backends = sorted({b for v in series.values() for b in v}, key=backend_key)
    width = 0.8 / max(1, len(backends))
    for i, b in enumerate(backends):
        xs = [c + (i - (len(backends) - 1) / 2) * width for c in range(len(cases))]
        ys = [series[c].get(b, float("nan")) for c in cases]
        yerr = None
        if err:
            lo = [max(0.0, y - err[0].get(c, {}).get(b, y)) for c, y in zip(cases, ys)]
            hi = [max(0.0, err[1].get(c, {}).get(b, y) - y) for c, y in zip(cases, ys)]
            yerr = [lo, hi]
        ax.bar(xs, ys, width=width, label=b, yerr=yerr, capsize=2 if yerr else 0)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels(cases, rotation=30 if len(cases) > 3 else 0, ha="right" if len(cases) > 3 else "center",
                       fontsize=8)
    if log:
        ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def draw(doc, out_dir, formats, metric=None, x=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    exp = get_path(doc, "experiment.id") or os.path.splitext(os.path.basename(get_path(doc, "experiment.config") or "results"))[0]
    title = get_path(doc, "experiment.title") or exp
    if len(title) > 70:
        title = textwrap.shorten(title, 70, placeholder="...")
    runs = ok_runs(doc)
    written = []
    # Ceilings probes do different work per backend: only their rates compare, not their times.
    rates_only = bool(runs) and all(r.get("family") == "ceilings" for r in runs)

    def save(fig, kind):
        fig.tight_layout()
        for fmt in formats:
            p = os.path.join(out_dir, f"{exp}_{kind}.{fmt}")
            fig.savefig(p, dpi=150)
            written.append(p)
        plt.close(fig)

    def width(n):
        return max(6.0, min(18.0, 1.0 + 0.9 * n))

    t = time_series(runs)
    if t["median"] and not rates_only:
        fig, ax = plt.subplots(figsize=(width(len(t["median"])), 4.5))
        grouped_bars(ax, t["median"], log=True, err=(t["min"], t["max"]))
        ax.set_ylabel("median wall time (s), min-max whiskers")
        ax.set_title(f"{title}: time", fontsize=10)
        save(fig, "time")

    s = {} if rates_only else speedup_series(runs)
    if s:
        fig, ax = plt.subplots(figsize=(width(len(s)), 4.5))
        grouped_bars(ax, s, log=any(v > 50 for d in s.values() for v in d.values()))
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_ylabel("speedup over sequential (ratio of medians)")
        ax.set_title(f"{title}: speedup", fontsize=10)
        save(fig, "speedup")

    xp, lines = (None, {}) if rates_only else scaling_series(runs, x)
    if lines:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, pts in lines.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_xlabel(xp)
        ax.set_ylabel("median wall time (s)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        ax.set_title(f"{title}: scaling", fontsize=10)
        save(fig, "scaling")

    b = breakdown_series(runs)
    if b:
        # A phase is (name, clock): the same name on both clocks is two segments, never summed.
        keys = list(OrderedDict.fromkeys((p, c) for _, ph in b for p, _, c in ph))
        fig, ax = plt.subplots(figsize=(width(len(b)), 5))
        bottom = [0.0] * len(b)
        for p, c in keys:
            vals = [sum(sec for n, sec, cl in ph if n == p and cl == c) for _, ph in b]
            ax.bar(range(len(b)), vals, bottom=bottom, label=f"{p} ({c})", hatch="//" if c == "device" else None)
            bottom = [x0 + v for x0, v in zip(bottom, vals)]
        ax.set_xticks(range(len(b)))
        ax.set_xticklabels([l for l, _ in b], fontsize=7, rotation=30 if len(b) > 3 else 0, ha="right" if len(b) > 3 else "center")
        ax.set_ylabel("seconds per run (hatched: device clock)")
        ax.legend(fontsize=7)
        ax.set_title(f"{title}: phase breakdown", fontsize=10)
        save(fig, "breakdown")

    metric = metric or default_metric(runs)
    if metric:
        m = metric_series(runs, metric)
        if m:
            fig, ax = plt.subplots(figsize=(width(len(m)), 4.5))
            values = [v for d in m.values() for v in d.values() if v > 0]
            grouped_bars(ax, m, log=bool(values) and max(values) / min(values) > 100)
            ax.set_ylabel("value in the unit under each group" if metric == "metrics.display_value" else metric)
            ax.set_title(title if metric == "metrics.display_value" else f"{title}: {metric}", fontsize=10)
            save(fig, "metric")
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="results JSON (schema 1)")
    ap.add_argument("--out", help="output folder (default: beside the results file)")
    ap.add_argument("--formats", default="png,svg")
    ap.add_argument("--metric", help="dotted path drawn as the metric figure, e.g. metrics.gpops_per_s")
    ap.add_argument("--x", help="swept param of the scaling figure, e.g. params.population")
    ap.add_argument("--data", action="store_true", help="print the series as JSON, draw nothing")
    a = ap.parse_args(argv)
    try:
        with open(a.results) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"plot_results: cannot read {a.results}: {e}", file=sys.stderr)
        return 2
    if doc.get("schema_version") != 1:
        print(f"plot_results: {a.results}: expected schema_version 1, got {doc.get('schema_version')}", file=sys.stderr)
        return 2
    runs = ok_runs(doc)
    if a.data:
        xp, lines = scaling_series(runs, a.x)
        metric = a.metric or default_metric(runs)
        json.dump({"time": time_series(runs), "speedup": speedup_series(runs), "scaling": {"x": xp, "lines": lines},
                   "breakdown": breakdown_series(runs), "metric": {"path": metric, "series": metric_series(runs, metric) if metric else {}}},
                  sys.stdout, indent=1)
        print()
        return 0
    out = a.out or os.path.dirname(os.path.abspath(a.results))
    os.makedirs(out, exist_ok=True)
    try:
        written = draw(doc, out, [f.strip() for f in a.formats.split(",") if f.strip()], a.metric, a.x)
    except ImportError as e:
        print(f"plot_results: matplotlib is missing ({e}); install python3-matplotlib (scripts/install-deps.sh)", file=sys.stderr)
        return 2
    for p in written:
        print(p)
    if not written:
        print("plot_results: nothing to draw (no ok runs with timings)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
