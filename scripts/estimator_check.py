#!/usr/bin/env python3
"""The estimators' error, measured: joins each estimator_check_<family> results file's estimated runs
with the same backend's full runs on the same dataset (same machine, same invocation) and writes
<folder>/estimator_check.{json,md}: per pair the estimate, the measured time and the error, and per
family `max |error|: N %`.

  estimator_check.py [FOLDER]     FOLDER: results/<gpu-tag> (default results/h200)

Quantities (each the whole run's wall time, median of the repetitions):
  gmt       timing.median of the replay (host EA time + replayed evaluations interpolated) vs the
            whole induction's
  gp_rules  metrics.run_seconds of the replay vs the whole run's
  pittsburgh timing.median of the sampled estimate vs the whole evaluation's
  subtree   metrics.estimated_full_seconds of the row sample vs the whole evaluation's timing.median
"""
import json
import os
import sys
import results_json  # scripts/: the layout of every JSON file under results/

FAMILIES = [("gmt", "estimator_check_gmt"), ("gp_rules", "estimator_check_gp"), ("pittsburgh", "estimator_check_pitt"),
            ("subtree", "estimator_check_subtree")]


def seconds(family, run):
    m = run.get("metrics", {})
    if family == "gp_rules":
        return m.get("run_seconds", run["timing"]["median"])
    if family == "subtree" and m.get("estimated"):
        return m["estimated_full_seconds"]
    return run["timing"]["median"]


def label(run):
    p = run.get("params", {})
    return run["backend"] + (f" {p['threads']}" if run["backend"] == "openmp" and "threads" in p else "")


def pairs(family, doc):
    est, full = {}, {}
    for r in doc.get("runs", []):
        if r.get("status") != "ok" or r["backend"] == "cuda":
            continue
        key = (r["dataset"]["name"], label(r))
        (est if r.get("metrics", {}).get("estimated") else full)[key] = r
    out = []
    for key, e in sorted(est.items()):
        f = full.get(key)
        if not f:
            continue
        se, sf = seconds(family, e), seconds(family, f)
        m = e.get("metrics", {})
        samples = f["timing"].get("samples", [])
        spread = max(samples) / min(samples) - 1.0 if len(samples) > 1 and min(samples) > 0 else None
        out.append({"dataset": key[0], "backend": key[1], "estimate_seconds": se, "measured_seconds": sf,
                    "measured_spread": spread,
                    "error": se / sf - 1.0 if sf > 0 else None,
                    "method": m.get("estimate_method", ""),
                    "sample": {k: m[k] for k in ("replayed_generation_share", "replayed_evaluations", "replayed_calls",
                                                 "recorded_calls", "sampled_individuals", "rows_evaluated", "rows_total")
                               if k in m},
                    "estimate_commit": e.get("provenance", {}).get("git_sha", doc.get("provenance", {}).get("git_sha")),
                    "measured_commit": f.get("provenance", {}).get("git_sha", doc.get("provenance", {}).get("git_sha"))})
    return out


def main(argv):
    folder = argv[1] if len(argv) > 1 else "results/h200"
    report = {"definition": __doc__.strip(), "families": {}}
    lines = ["# The estimators' error against full runs", "",
             "Each slow baseline estimated (the shared replay estimator, algorithms/core/replay_estimate.hpp) and "
             "measured whole, on the same machine in the same invocation (configs/estimator_check_*.json; "
             "scripts/estimator_check.py). error = estimate / measured - 1; the measured runs' spread (max / min - 1 "
             "of the full runs' repetitions, where there are several) is the noise the error cannot be told from. "
             "Goal: |error| <= 10 %; a family above it shows its band beside its estimates.", ""]
    provenance, environment = None, {}
    for family, exp in FAMILIES:
        path = os.path.join(folder, exp + ".json")
        if not os.path.exists(path):
            report["families"][family] = {"pairs": [], "missing": path}
            continue
        doc = json.load(open(path))
        if provenance is None:
            provenance, environment = doc.get("provenance", {}), doc.get("environment", {})
        ps = pairs(family, doc)
        errs = [abs(p["error"]) for p in ps if p["error"] is not None]
        report["families"][family] = {"config": f"configs/{exp}.json", "pairs": ps,
                                      "max_abs_error": max(errs) if errs else None}
        prov = doc.get("provenance", {})
        lines += [f"## {family} (configs/{exp}.json)", "",
                  f"Run at {str(prov.get('git_sha', '?'))[:12]}{'-dirty' if prov.get('git_dirty') else ''}, "
                  f"{prov.get('utc_time', '?')}.", "",
                  "| dataset | backend | estimate s | measured s | error | measured runs' spread | sample |",
                  "|---|---|---:|---:|---:|---:|---|"]
        for p in ps:
            sample = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in p["sample"].items())
            spread = "" if p["measured_spread"] is None else f"{100 * p['measured_spread']:.1f} %"
            lines.append(f"| {p['dataset']} | {p['backend']} | {p['estimate_seconds']:.4g} | {p['measured_seconds']:.4g} | "
                         f"{100 * p['error']:+.1f} % | {spread} | {sample} |")
        lines.append("")
        if ps and ps[0]["method"]:
            lines += [f"Method (first pair): {ps[0]['method']}", ""]
    if provenance:
        gpus = ", ".join(g.get("name", "") for g in environment.get("devices", []) if isinstance(g, dict))
        lines += [f"Machine: host {provenance.get('hostname', '?')}: {gpus or 'no GPU'}, {environment.get('cpu_model', '?')} "
                  f"({environment.get('cpu_cores', '?')} logical CPUs); each run's own commit and time are in its "
                  "results file.", ""]
    for family, _ in FAMILIES:
        f = report["families"][family]
        if f.get("max_abs_error") is None:
            lines.append(f"{family} max |error|: not measured ({f.get('missing', 'no estimated / measured pair')})")
        else:
            lines.append(f"{family} max |error|: {100 * f['max_abs_error']:.1f} %")
    os.makedirs(folder, exist_ok=True)
    results_json.dump(report, os.path.join(folder, "estimator_check.json"))
    open(os.path.join(folder, "estimator_check.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
