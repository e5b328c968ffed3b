#!/usr/bin/env python3
"""The MPI scaling study: gathers scripts/device/mpi_scaling.sh's runs (BASE/{strong,weak}/np<N>/<experiment>.json)
into BASE/../mpi_scaling.{json,md} and BASE/../plots/mpi_scaling.png: per workload and rank count the
median whole-run time, speedup and parallel efficiency against one rank, the combine step's time
(summing counts / votes, gathering coverage or evaluated trees over the ranks) and the bytes one rank
receives per combine call, as the code counts them (the sharded engine's, evaluator's or forest's
combine_bytes / combine_calls of rank 0): the rule engine (GP, Pittsburgh) sums each rank's counts
(rules x classes + 1 64-bit values) and, for GP, gathers every rule's coverage bits; GMT (split by
individuals) all-gathers the evaluated trees; the forest sums rows x classes 32-bit votes. Since
f1d7e90 an integer sum is an all-reduce counted as 2 (N - 1) / N x its bytes (before: an
all-gather, N x its bytes), so runs from before and after that commit count differently.

    scripts/mpi_scaling.py BASE [--smoke]
"""
import json
import os
import re
import sys
import results_json  # scripts/: the layout of every JSON file under results/


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    smoke = "--smoke" in sys.argv
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    base = args[0]
    rows = []
    for mode in ("strong", "weak"):
        d = os.path.join(base, mode)
        if not os.path.isdir(d):
            continue
        for npdir in sorted(os.listdir(d), key=lambda s: int(re.sub(r"\D", "", s) or 0)):
            m = re.fullmatch(r"np(\d+)", npdir)
            if not m:
                continue
            np_ = int(m.group(1))
            for name in sorted(os.listdir(os.path.join(d, npdir))):
                if not name.endswith(("-smoke.json" if smoke else ".json")) or (not smoke and name.endswith("-smoke.json")):
                    continue
                doc = load(os.path.join(d, npdir, name))
                ranks = doc["provenance"].get("ranks", {}).get("count", 1)
                for r in doc["runs"]:
                    if r.get("status") != "ok":
                        rows.append({"workload": doc["experiment"]["id"], "mode": mode, "ranks": np_, "status": r.get("status"),
                                     "reason": r.get("reason", "")})
                        continue
                    met, bd = r.get("metrics", {}), r.get("breakdown", {})
                    t = r["timing"]["median"]
                    # the combine step's account of rank 0 (over warm-up + repetitions): the rule
                    # engine's (gp_rules, pittsburgh: metrics.engine), the evaluator's or the
                    # forest's (gmt, vfdt: metrics.backend_info)
                    acct = met.get("engine") or met.get("backend_info") or {}
                    passes = max(1, r["timing"].get("repetitions", 1)) + r["timing"].get("warmup", 0)
                    comb = acct.get("combine_seconds")
                    if comb is None:
                        comb = bd.get("combine", {}).get("seconds", 0.0)
                        passes = max(1, r["timing"].get("repetitions", 1))  # (the breakdown: timed repetitions only)
                    comb /= passes
                    calls = acct.get("combine_calls", 0)
                    per_call = int(acct.get("combine_bytes", 0) / calls) if calls else 0
                    fam = r["family"]
                    what = {"gp_rules": f"{r['dataset'].get('rows')} rows", "pittsburgh": f"{r['dataset'].get('rows')} rows",
                            "vfdt": f"{met.get('trees')} trees",
                            "gmt": f"population {r['params'].get('population')}, {r['dataset'].get('rows')} rows"}.get(fam, "")
                    rows.append({"workload": doc["experiment"]["id"], "mode": mode, "ranks": ranks, "status": "ok", "size": what,
                                 "median_s": t, "combine_s": comb, "combine_calls": calls if ranks > 1 else 0,
                                 "combine_bytes_per_call": per_call if ranks > 1 else 0, "checksum": r.get("checksum")})
    one = {(x["workload"], x["mode"]): x for x in rows if x.get("status") == "ok" and x["ranks"] == 1}
    for x in rows:
        b = one.get((x["workload"], x["mode"]))
        if x.get("status") != "ok" or not b:
            continue
        x["speedup"] = b["median_s"] / x["median_s"] if x["median_s"] > 0 else None
        x["efficiency"] = (x["speedup"] / x["ranks"] if x["mode"] == "strong" else x["speedup"]) if x["speedup"] else None
        x["combine_share"] = x["combine_s"] / x["median_s"] if x["median_s"] > 0 else None
        x["same_answer_as_one_rank"] = x["checksum"] == b["checksum"] if x["mode"] == "strong" else None
    out_dir = os.path.dirname(os.path.abspath(base))
    name = os.path.basename(os.path.normpath(base))  # mpi_scaling (CPU ranks) or mpi_scaling_gpu (ranks = GPUs)
    stem = name + "-smoke" if smoke else name
    with open(os.path.join(out_dir, stem + ".json"), "w") as f:
        f.write(results_json.dumps({"source": base, "definition": __doc__.strip(), "rows": rows}))
    gpu = name.endswith("_gpu")
    md = ["# MPI scaling" + (": ranks = GPUs" if gpu else ""), "",
          "Measured by scripts/device/mpi_scaling.sh (" + ("one GPU per rank, the CUDA backend" if gpu else "one core per rank") + "); efficiency = speedup / ranks (strong), "
          "T(1) / T(N) (weak). Combine bytes: what one rank receives per combine call, counted by the code (not a measured transfer).", "",
          "| workload | mode | size | ranks | median s | speedup | efficiency | combine s | combine share | combine bytes per call and rank | same answer |",
          "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for x in rows:
        if x.get("status") != "ok":
            md.append(f"| {x['workload']} | {x['mode']} | | {x['ranks']} | {x['status']}: {x.get('reason', '')} | | | | | | |")
            continue
        f = lambda v, p=".3g": "" if v is None else format(v, p)
        same = "" if x.get("same_answer_as_one_rank") is None else ("yes" if x["same_answer_as_one_rank"] else "NO")
        md.append(f"| {x['workload']} | {x['mode']} | {x['size']} | {x['ranks']} | {f(x['median_s'])} | {f(x.get('speedup'))} | "
                  f"{f(x.get('efficiency'))} | {f(x['combine_s'])} | {f(x.get('combine_share'))} | {x['combine_bytes_per_call']:,} | {same} |")
    with open(os.path.join(out_dir, stem + ".md"), "w") as f:
        f.write("\n".join(md) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, mode in zip(axes, ("strong", "weak")):
            for wl in sorted({x["workload"] for x in rows}):
                pts = sorted((x["ranks"], x["efficiency"]) for x in rows
                             if x.get("status") == "ok" and x["mode"] == mode and x["workload"] == wl and x.get("efficiency"))
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=wl)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("ranks")
            ax.set_ylabel("parallel efficiency")
            ax.set_ylim(0, 1.2)
            ax.set_title(f"{mode} scaling")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
        fig.savefig(os.path.join(out_dir, "plots", stem + ".png"), dpi=120)
    except ImportError:
        print("mpi_scaling: matplotlib missing: no plot", file=sys.stderr)
    print(os.path.join(out_dir, stem + ".md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
