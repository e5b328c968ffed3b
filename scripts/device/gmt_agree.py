#!/usr/bin/env python3
"""Compares a GMT results file with the committed one run by run: the GPU fast path's trees (fitness
and leaves: a change of shape must not change them) and every case's median time beside the
committed one (times may move; the ratio says by how much).

  gmt_agree.py COMMITTED.json NEW.json     Markdown on stdout; exit 1 when a run failed or a
                                           fast-path tree differs from the committed one
"""
import json
import sys


def key(run):
    p = run.get("params", {})
    return (run["dataset"]["name"], run["backend"], p.get("gpu_path", "") if run["backend"] == "cuda" else "",
            str(p.get("threads", "")) if run["backend"] == "openmp" else "")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    base = {key(r): r for r in json.load(open(argv[1]))["runs"] if r.get("status") == "ok"}
    new = json.load(open(argv[2]))["runs"]
    print("| dataset | backend | fitness committed | fitness now | leaves committed | leaves now | "
          "median committed s | median now s | now / committed | estimated |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    bad = 0
    for r in new:
        k = key(r)
        label = " ".join(x for x in (k[1], k[2], k[3]) if x)
        if r.get("status") != "ok":
            print(f"| {k[0]} | {label} | | | | | | | | {r.get('status')}: {r.get('reason', '')} |")
            bad += 1
            continue
        b = base.get(k)
        m = r.get("metrics", {})
        bm = b.get("metrics", {}) if b else {}
        t = r["timing"]["median"]
        bt = b["timing"]["median"] if b else None
        flag = ""
        if k[1] == "cuda" and k[2] == "fast" and b and (m.get("fitness") != bm.get("fitness") or m.get("leaves") != bm.get("leaves")):
            flag = " **DIFFERS**"
            bad += 1
        ratio = f"{t / bt:.3f}" if bt else ""
        print(f"| {k[0]} | {label} | {bm.get('fitness', '')} | {m.get('fitness', '')}{flag} | {bm.get('leaves', '')} | "
              f"{m.get('leaves', '')} | {'' if bt is None else f'{bt:.4g}'} | {t:.4g} | {ratio} | {m.get('estimated', '')} |")
    print()
    print(f"{bad} run(s) failed or with a fast-path tree other than the committed one")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
