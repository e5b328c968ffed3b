#!/usr/bin/env python3
"""GP classification figures from results JSON (Cano, Zafra, Ventura 2012, Fig. 14).

  plots/gp_figures.py fig14 results/h100/gp_table3.json results/h100/gp_table4.json \
      results/h100/gp_table5.json [--out DIR]          -> DIR/gp_fig14.png
  --data: print the extracted series as JSON and draw nothing (no matplotlib needed).
  Drawing also writes DIR/gp_fig14.csv: the plotted means per dataset in the rendered tables' CSV
  layout (a header row starting "table", estimated cells ending in "*"), the table
  scripts/reproduction.py decides Fig. 14's claim from;
  --check-csv FILE: exit 1 when FILE differs from the CSV these results give (no matplotlib needed).

Fig. 14: average speedup against the number of instances (both log). Ours: per dataset, each
configuration's speedup over our sequential backend (whole-run times, metrics.run_seconds, of
the same results file: OpenMP 1/2/4/16 threads, one and two GPUs), averaged over the three algorithms
(Falco, Bojarczuk, Tan: one results file each). The paper's (dashed): its Tables 3-5 speedups
over its Java baseline, averaged the same way, with the instances of its Table 2.
A mean speedup is estimated (plot_results.estimated) when any speedup in it has an estimated
operand (a replayed sequential baseline or configuration run: the tables' *); it is drawn as a
hollow marker, and --data gives each point as (instances, mean speedup, dataset, estimated).
"""
import argparse
import csv
import io
import json
import os
import sys
from collections import defaultdict

from plot_results import draw_series, estimated, estimated_legend  # noqa: E402 (beside this script)

HERE = os.path.dirname(os.path.abspath(__file__))
PAPER = os.path.join(HERE, "..", "experiments", "paper_tables")
NAMES = {"iris": "Iris", "new_thyroid": "New-thyroid", "ecoli": "Ecoli", "contraceptive": "Contraceptive",
         "thyroid": "Thyroid", "penbased": "Penbased", "shuttle": "Shuttle", "connect4": "Connect-4",
         "kddcup": "KDDcup", "poker_full": "Poker"}
PAPER_CSV = ["gp_table3_falco.csv", "gp_table4_bojarczuk.csv", "gp_table5_tan.csv"]
PAPER_COLS = {"1 CPU (JNI)": "speedup_1cpu", "2 CPUs (JNI)": "speedup_2cpu", "4 CPUs (JNI)": "speedup_4cpu",
              "1 GTX 480": "speedup_1gtx480", "2 GTX 480": "speedup_2gtx480"}


def config_name(run):
    p = run.get("params", {})
    if run["backend"] == "openmp":
        t = p.get("threads", 0)
        return f"{t} CPU" + ("s" if t != 1 else "")
    if run["backend"] == "cuda":
        d = p.get("devices", 1) or 1
        name = f"{d} GPU" + ("s" if d != 1 else "")
        return name + (" fast" if p.get("path", "fast") == "fast" else " faithful")
    return run["backend"]


def ours(docs, work=None):
    """{config: [(rows, mean speedup over the algorithms, dataset, estimated)]}; work, when given,
    collects {config: {dataset: [(GPops of the run, GPops/s of its kernels, sequential seconds,
    sequential estimated)]}} of the GPU runs."""
    per = defaultdict(lambda: defaultdict(list))  # config -> dataset -> [(speedup, estimated)]
    rows = {}
    for doc in docs:
        seq, seq_run = {}, {}
        runs = [r for r in doc.get("runs", []) if r.get("status") == "ok"]
        for r in runs:
            # the tables' baseline: the sequential case that runs in full below replay_above_gpops
            # (the case with replay_above_gpops 0 always replays: it only checks the estimator)
            if r["backend"] == "sequential" and r.get("params", {}).get("replay_above_gpops", 1) != 0:
                seq[r["dataset"]["name"]] = r["metrics"].get("run_seconds") or r["timing"]["median"]
                seq_run[r["dataset"]["name"]] = r
                rows[r["dataset"]["name"]] = r["dataset"].get("rows")
        for r in runs:
            ds = r["dataset"]["name"]
            if r["backend"] == "sequential" or ds not in seq:
                continue
            t = r["metrics"].get("run_seconds") or r["timing"]["median"]
            if t:
                per[config_name(r)][ds].append((seq[ds] / t, estimated(seq_run[ds], r)))
            m = r.get("metrics", {})
            if work is not None and r["backend"] == "cuda" and m.get("gpops") and m.get("gpops_per_s_kernel"):
                work.setdefault(config_name(r), {}).setdefault(ds, []).append(
                    (m["gpops"], m["gpops_per_s_kernel"], seq[ds], estimated(seq_run[ds])))
    out = {}
    for cfg, by_ds in per.items():
        out[cfg] = sorted((rows.get(ds) or 0, sum(x for x, _ in v) / len(v), ds, estimated(*(e for _, e in v)))
                          for ds, v in by_ds.items())
    return out


def paper():
    inst = {}
    with open(os.path.join(PAPER, "gp_table2_datasets.csv")) as f:
        for r in csv.DictReader(f):
            inst[r["dataset"]] = int(r["instances"])
    per = defaultdict(lambda: defaultdict(list))
    for name in PAPER_CSV:
        with open(os.path.join(PAPER, name)) as f:
            for r in csv.DictReader(f):
                for label, col in PAPER_COLS.items():
                    per[label][r["dataset"]].append(float(r[col]))
    return {label: sorted((inst[ds], sum(v) / len(v), ds) for ds, v in by_ds.items()) for label, by_ds in per.items()}


# Fig. 14's table: ours and the paper's columns under the names the GP tables give the same
# quantities (the paper's GTX 480 ran its design, our faithful path).
CSV_TITLE = ("Fig. 14 - mean whole-run speedup over the three algorithms (Falco, Bojarczuk, Tan) "
             "against instances, over our sequential backend (paper: over its Java)")
CSV_OURS = [("1 CPU", "1 CPU"), ("2 CPUs", "2 CPUs"), ("4 CPUs", "4 CPUs"), ("16 CPUs", "16 CPUs"),
            ("1 GPU faithful", "1 GPU faithful"), ("1 GPU fast", "1 GPU fast")]
CSV_PAPER = [("1 CPU (JNI)", "1 CPU (paper)"), ("2 CPUs (JNI)", "2 CPUs (paper)"), ("4 CPUs (JNI)", "4 CPUs (paper)"),
             ("1 GTX 480", "1 GPU faithful (paper)"), ("2 GTX 480", "2 GPUs faithful (paper)")]


def mean(vals):
    return sum(vals) / len(vals) if vals else None


def fig14_csv(data, work):
    """Fig. 14's means (data: the plotted series) as CSV text, one row per dataset in order of
    instances, with what a speedup is made of (seq time / GPU time = seq seconds per GPop x GPU
    GPops per second; work: ours()'s GPU runs): the mean GPops of a run, our sequential backend's
    nanoseconds per GPop and each GPU path's kernel rate."""
    by_ds = defaultdict(dict)
    for cfg, pts in data["ours"].items():
        for n, v, ds, est in pts:
            by_ds[ds][cfg] = f"{v:.3g}" + ("*" if est else "")
            by_ds[ds]["instances"] = n
    paper_by = defaultdict(dict)
    for cfg, pts in data["paper"].items():
        for n, v, ds in pts:
            paper_by[ds][cfg] = f"{v:.2f}"
    header = ["table", "Dataset", "instances", "GPops per run", "seq ns per GPop"] + [lab for _, lab in CSV_OURS] + \
             [lab for _, lab in CSV_PAPER] + ["1 GPU faithful kernel TGPops/s", "1 GPU fast kernel TGPops/s"]
    out = [header]
    for ds in sorted(by_ds, key=lambda d: (by_ds[d].get("instances") or 0, d)):
        name = NAMES.get(ds, ds)
        runs = work.get("1 GPU faithful", {}).get(ds, [])
        gpops = mean([w[0] for w in runs])
        ns = mean([w[2] / w[0] * 1e9 for w in runs])
        rate = {cfg: mean([w[1] for w in work.get(cfg, {}).get(ds, [])]) for cfg in ("1 GPU faithful", "1 GPU fast")}
        row = [CSV_TITLE, name, str(by_ds[ds].get("instances", "")), f"{gpops:.3g}" if gpops else "",
               (f"{ns:.3g}" + ("*" if any(w[3] for w in runs) else "")) if ns else ""]
        row += [by_ds[ds].get(cfg, "") for cfg, _ in CSV_OURS]
        row += [paper_by.get(name, {}).get(cfg, "") for cfg, _ in CSV_PAPER]
        row += [f"{rate[c] / 1e12:.3g}" if rate[c] else "" for c in ("1 GPU faithful", "1 GPU fast")]
        out.append(row)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(out)
    return buf.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("figure", choices=["fig14"])
    ap.add_argument("results", nargs="+", help="gp_table3/4/5 results JSON")
    ap.add_argument("--out", default=".")
    ap.add_argument("--data", action="store_true", help="print the series as JSON, draw nothing")
    ap.add_argument("--check-csv", metavar="FILE", help="exit 1 when FILE is not the CSV these results give")
    a = ap.parse_args()
    docs = []
    for p in a.results:
        with open(p) as f:
            docs.append(json.load(f))
    work = {}
    data = {"ours": ours(docs, work), "paper": paper()}
    if a.check_csv:
        fresh = fig14_csv(data, work)
        try:
            with open(a.check_csv) as f:
                old = f.read()
        except OSError as e:
            sys.exit(f"gp_figures: {a.check_csv}: {e.strerror}")
        if old != fresh:
            print(f"gp_figures: {a.check_csv} is stale: rerun plots/gp_figures.py fig14 ... --out "
                  f"{os.path.dirname(a.check_csv) or '.'}", file=sys.stderr)
            sys.exit(1)
        return
    if a.data:
        json.dump(data, sys.stdout, indent=1)
        print()
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for cfg, pts in sorted(data["ours"].items()):
        if pts:
            draw_series(ax, [p[0] for p in pts], [p[1] for p in pts], [p[3] for p in pts], "-o", label=f"ours: {cfg}")
    for cfg, pts in sorted(data["paper"].items()):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle="--", marker=".", alpha=0.6, label=f"paper: {cfg} (vs Java)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("instances")
    ax.set_ylabel("average speedup (over the three algorithms)")
    ax.set_title("GP classification: average speedup vs instances (Fig. 14)")
    ax.grid(True, which="both", alpha=0.3)
    estimated_legend(ax, fontsize=7, ncol=2)
    fig.tight_layout()
    os.makedirs(a.out, exist_ok=True)
    for ext in ("png",):  # PNG only: results/ is kept small
        fig.savefig(os.path.join(a.out, f"gp_fig14.{ext}"), dpi=130)
    with open(os.path.join(a.out, "gp_fig14.csv"), "w") as f:
        f.write(fig14_csv(data, work))
    print(f"wrote {a.out}/gp_fig14.png and gp_fig14.csv", file=sys.stderr)


if __name__ == "__main__":
    main()
