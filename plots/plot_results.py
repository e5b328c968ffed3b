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
--data prints the extracted series as JSON and draws nothing (no matplotlib needed); its "estimated"
key mirrors every series with true where the value comes from an estimated run.
Only runs with status "ok" are drawn; skipped/failed runs are listed on stderr.

Estimated values (shared by every script in plots/): a run whose time is not wholly measured has
metrics.estimated true (its tables mark the cell *); a value derived from several runs (a speedup,
a ratio) is estimated when any of its operands is. Figures draw such points as hollow markers
(bars: hollow and dotted) of the series' colour, with one legend entry per axes saying so
(ESTIMATED_LABEL); CSV series carry an "estimated" column (true/false).
"""
import argparse
import csv
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


# ---------------------------------------------------------------------------------------------
# Estimated values: one rule and one drawing style for every figure script in plots/.
ESTIMATED_LABEL = "hollow: estimated (see the table's notes)"
ESTIMATED_HATCH = "\\"  # back diagonals, apart from a device-clock phase's //; sparse (a dot hatch made a bar chart's SVG ~1.7 MB)


def estimated(*operands):
    """True when any operand is estimated: a run (metrics.estimated true) or a flag already derived.
    A value computed from several runs (a speedup, a ratio, a mean) is estimated(run_a, run_b, ...)."""
    for x in operands:
        if x is True or (isinstance(x, dict) and get_path(x, "metrics.estimated") is True):
            return True
    return False


def _note_estimated(ax, kind):
    """Remember that ax shows estimated values (kind "marker" or "bar") for estimated_legend."""
    kinds = getattr(ax, "_gpudm_estimated", [])
    if kind not in kinds:
        kinds.append(kind)
    ax._gpudm_estimated = kinds


def draw_series(ax, xs, ys, est=None, fmt="-o", **kw):
    """ax.plot(xs, ys, fmt, **kw) (one line, its markers filled), then the points whose est flag is
    true redrawn hollow (white face, the line's colour as edge) on top. Returns the Line2D."""
    (line,) = ax.plot(list(xs), list(ys), fmt, **kw)
    est = list(est or [])
    pts = [(x, y) for x, y, e in zip(xs, ys, est) if e]
    if pts and line.get_marker() not in (None, "None", "none", ""):
        colour = line.get_color()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colour, linestyle="none", marker=line.get_marker(),
                markersize=line.get_markersize(), markeredgewidth=line.get_markeredgewidth(),
                markerfacecolor="white", markeredgecolor=colour, alpha=line.get_alpha(),
                zorder=line.get_zorder() + 0.01, label="_nolegend_")
        _note_estimated(ax, "marker")
    return line


def draw_bars(ax, xs, heights, est=None, **kw):
    """ax.bar(xs, heights, **kw), then the bars whose est flag is true made hollow: no fill, the
    bar's colour as edge and hatch (dotted, beside any hatch of its own). Returns the BarContainer;
    its legend entry (estimated_legend) stays a filled patch whatever its first bar became."""
    bars = ax.bar(xs, heights, **kw)
    if bars.patches:
        from matplotlib.patches import Patch
        p0 = bars.patches[0]
        bars._gpudm_handle = Patch(facecolor=p0.get_facecolor(), edgecolor=p0.get_edgecolor(), hatch=p0.get_hatch(),
                                   linewidth=p0.get_linewidth())
    any_est = False
    for patch, e in zip(bars.patches, list(est or [])):
        if e:
            colour = patch.get_facecolor()
            patch.set_facecolor("none")
            patch.set_edgecolor(colour)
            patch.set_hatch((patch.get_hatch() or "") + ESTIMATED_HATCH)
            any_est = True
    if any_est:
        _note_estimated(ax, "bar")
    return bars


def estimated_legend(ax, covers=None, **kw):
    """ax.legend(**kw) with, when ax (or any axes in covers: panels that share this legend) shows an
    estimated value, one more entry: ESTIMATED_LABEL."""
    handles, labels = ax.get_legend_handles_labels()
    handles = [getattr(h, "_gpudm_handle", h) for h in handles]
    kinds = [k for a in (covers or [ax]) for k in getattr(a, "_gpudm_estimated", [])]
    if kinds:
        if "marker" in kinds:
            from matplotlib.lines import Line2D
            h = Line2D([], [], linestyle="none", marker="o", markerfacecolor="white", markeredgecolor="0.3")
        else:
            from matplotlib.patches import Patch
            h = Patch(facecolor="none", edgecolor="0.3", hatch=ESTIMATED_HATCH)
        handles.append(h)
        labels.append(ESTIMATED_LABEL)
    return ax.legend(handles, labels, **kw)


def csv_value(v):
    """CSV spelling of a value: booleans as true / false, None as empty."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else v


def write_csv(path, rows):
    """rows (dicts) as CSV, columns in first-seen order, booleans as true / false (csv_value).
    Without rows nothing is written."""
    if not rows:
        return
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: csv_value(v) for k, v in r.items()})


class Series(OrderedDict):
    """case -> {backend: value}; .estimated mirrors it: case -> {backend: bool}."""

    def __init__(self):
        super().__init__()
        self.estimated = OrderedDict()

    def put(self, case, backend, value, est):
        self.setdefault(case, {})[backend] = value
        self.estimated.setdefault(case, {})[backend] = estimated(est)


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
    """Series case -> {backend label: value} over runs where value_fn gives a number (.estimated:
    the run's flag). unit_path: a per-run unit (e.g. metrics.display_unit) appended to the case label."""
    varying = varying_params(runs)
    out = Series()
    for r in runs:
        v = value_fn(r)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            continue
        label = case_label(r, varying, exclude)
        unit = get_path(r, unit_path) if unit_path else None
        if unit:
            label += f"\n({unit})"
        out.put(label, backend_label(r), v, r)
    return out


def time_series(runs):
    med = grouped(runs, lambda r: get_path(r, "timing.median"))
    lo = grouped(runs, lambda r: get_path(r, "timing.min"))
    hi = grouped(runs, lambda r: get_path(r, "timing.max"))
    return {"median": med, "min": lo, "max": hi}


def speedup_series(runs):
    """case -> {backend: median(sequential) / median(backend)} for cases with a sequential run
    (.estimated: either median estimated)."""
    med = grouped(runs, lambda r: get_path(r, "timing.median"))
    out = Series()
    for case, by_backend in med.items():
        base = by_backend.get("sequential")
        if not base:
            continue
        for b, t in by_backend.items():
            if b != "sequential" and t > 0:
                out.put(case, b, base / t, estimated(med.estimated[case]["sequential"], med.estimated[case][b]))
    return out


def scaling_series(runs, x=None):
    """(param, {line label: [(x, median)]}) for a numeric param with >= 3 values, else (None, {});
    the lines' .estimated: {line label: [bool per point]}."""
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
    lines = Series()
    for r in runs:
        xv, t = r.get("params", {}).get(x), get_path(r, "timing.median")
        if xv is None or t is None:
            continue
        label = backend_label(r)
        case = case_label(r, varying)
        if len({case_label(q, varying) for q in runs}) > 1:
            label += " / " + case
        lines.setdefault(label, []).append((xv, t, estimated(r)))
    for label, v in lines.items():
        v.sort()
        lines.estimated[label] = [e for _, _, e in v]
        lines[label] = [(p[0], p[1]) for p in v]
    return x, lines


def breakdown_series(runs):
    """[(run label, [(phase, seconds, clock)])] for runs with a breakdown; .estimated: [bool per run]."""
    varying = varying_params(runs)
    out = Breakdown()
    for r in runs:
        b = r.get("breakdown") or {}
        phases = [(k, v.get("seconds", 0.0), v.get("clock", "host")) for k, v in b.items() if isinstance(v, dict)]
        if phases:
            out.append((backend_label(r) + "\n" + case_label(r, varying), phases))
            out.estimated.append(estimated(r))
    return out


class Breakdown(list):
    """breakdown_series' list; .estimated: one flag per entry."""

    def __init__(self):
        super().__init__()
        self.estimated = []


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
        est = [getattr(series, "estimated", {}).get(c, {}).get(b, False) for c in cases]
        draw_bars(ax, xs, ys, est, width=width, label=b, yerr=yerr, capsize=2 if yerr else 0)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels(cases, rotation=30 if len(cases) > 3 else 0, ha="right" if len(cases) > 3 else "center",
                       fontsize=8)
    if log:
        ax.set_yscale("log")
    estimated_legend(ax, fontsize=8)
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
            draw_series(ax, [p[0] for p in pts], [p[1] for p in pts], lines.estimated[label], "-o", label=label)
        ax.set_xlabel(xp)
        ax.set_ylabel("median wall time (s)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        estimated_legend(ax, fontsize=7)
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
            draw_bars(ax, range(len(b)), vals, b.estimated, bottom=bottom, label=f"{p} ({c})",
                      hatch="//" if c == "device" else None)
            bottom = [x0 + v for x0, v in zip(bottom, vals)]
        ax.set_xticks(range(len(b)))
        ax.set_xticklabels([l for l, _ in b], fontsize=7, rotation=30 if len(b) > 3 else 0, ha="right" if len(b) > 3 else "center")
        ax.set_ylabel("seconds per run (hatched: device clock)")
        estimated_legend(ax, fontsize=7)
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
        t, s, b = time_series(runs), speedup_series(runs), breakdown_series(runs)
        m = metric_series(runs, metric) if metric else Series()
        json.dump({"time": t, "speedup": s, "scaling": {"x": xp, "lines": lines},
                   "breakdown": b, "metric": {"path": metric, "series": m},
                   "estimated": {"time": t["median"].estimated, "speedup": s.estimated, "scaling": lines.estimated,
                                 "breakdown": b.estimated, "metric": m.estimated}},
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
