#!/usr/bin/env python3
"""MOA's forest rate along a stream, as a peer file for the tables: from a run of
results/cpu/moa_vfdt.json (scripts/peers/moa_vfdt.py) whose curve records MOA's evaluation CPU
seconds every `every` instances, the rate over the first N instances (N / eval_cpu_s(N), the seconds
interpolated linearly between the curve's points) for each N of a config's datasets (their
"rows" option), one row per N keyed as the config's runs are (dataset, options, mode).

  python3 scripts/peers/moa_rate.py --config configs/vfdt_fig11.json [--moa results/cpu/moa_vfdt.json]
                                    [--forest ozabag_adwin] [--out results/cpu/moa_vfdt_rate.json]
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import results_json  # noqa: E402


def interpolate(xs, ys, x):
    """ys at x, linearly between the points (x within [0, xs[-1]]; (0, 0) is the curve's start)."""
    px, py = 0.0, 0.0
    for cx, cy in zip(xs, ys):
        if x <= cx:
            return py + (cy - py) * (x - px) / (cx - px) if cx > px else cy
        px, py = cx, cy
    return None  # past the curve's end


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True)
    ap.add_argument("--moa", default=os.path.join(ROOT, "results", "cpu", "moa_vfdt.json"))
    ap.add_argument("--forest", default="ozabag_adwin")
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "cpu", "moa_vfdt_rate.json"))
    a = ap.parse_args()
    cfg = json.load(open(a.config))
    moa = json.load(open(a.moa))
    mode = cfg.get("params", {}).get("mode", "forest")
    rows = []
    for ds in cfg["datasets"]:
        name, options = (ds, {}) if isinstance(ds, str) else (ds["name"], ds.get("options", {}))
        base = {k: v for k, v in options.items() if k != "rows"}
        run = next((r for r in moa["runs"] if r["dataset"] == name and r.get("options", {}) == base and r.get("mode") == mode
                    and (mode == "tree" or r.get("forest") == a.forest) and "eval_cpu_s" in r.get("curve", {})), None)
        if run is None:
            print(f"moa_rate: no {a.forest} run with an eval_cpu_s curve on {name} {base} in {a.moa}", file=sys.stderr)
            return 1
        n = int(options.get("rows", run["instances"]))
        c = run["curve"]
        t = interpolate(c["instances"], c["eval_cpu_s"], n)
        if t is None:
            print(f"moa_rate: {name} {options}: the curve ends at {c['instances'][-1]} instances", file=sys.stderr)
            return 1
        rows.append({"dataset": name, "options": options, "mode": mode, "instances": n, "moa_eval_cpu_s": t,
                     "instances_per_s": n / t, "moa_run_utc": run.get("utc"), "moa_model": run.get("model")})
    doc = {"schema": "gpudm-peer-rate", "source": os.path.relpath(a.moa, ROOT),
           "definition": __doc__.strip().split("\n\n")[0], "host": moa.get("host"), "cpu": moa.get("cpu"),
           "moa_version": moa.get("moa_version"), "runs": rows}
    results_json.dump(doc, a.out)
    print(f"moa_rate: {len(rows)} rows -> {os.path.relpath(a.out, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
