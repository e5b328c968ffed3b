#!/usr/bin/env python3
"""results/<gpu>/README.md: a generated index of the folder, read from each file's own provenance.

  scripts/results_index.py [results/h200 ...]          write README.md of each folder (default: every
                                                       results/<gpu>/ folder, results/cpu aside)
  scripts/results_index.py --check [results/h200 ...]  exit 1 when a committed index differs from a
                                                       fresh one (run by ctest: scripts.results_index)

Per file: what it is (the experiment's title or the study's name), runs, the commits and machines
that made it and when, from the file itself (run_experiment's provenance and environment blocks,
a study's "provenance"/"gmt_provenance"); the history of each file is git's (git log -- FILE).
"""
import argparse
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def short(sha):
    return (sha or "unknown")[:7] if sha and sha != "unknown" else "unknown"


def machine(env):
    if not isinstance(env, dict):
        return ""
    devs = env.get("devices") or []
    names = {}
    for d in devs:
        if isinstance(d, dict) and d.get("name"):
            names[d["name"]] = names.get(d["name"], 0) + 1
    gpu = ", ".join(f"{n} x {k}" if n > 1 else k for k, n in names.items())
    cores = env.get("cpu_cores")
    cpu = f"{cores} cores" if cores else ""
    return " + ".join(x for x in (gpu, cpu) if x) or "?"


def run_experiment_entry(doc):
    prov = doc.get("provenance", {})
    runs = doc.get("runs", [])
    # The origins are those of the measurements, as the rendered tables say (docs/results-schema.md):
    # the ok runs' own provenance (every run's when none is ok); an invocation that only kept or
    # skipped runs measured nothing. Files whose runs carry no provenance: every invocation.
    measured = [r for r in runs if r.get("status") == "ok"] or runs
    sessions = [r["provenance"] for r in measured if r.get("provenance")]
    if len(sessions) < len(measured):
        sessions = list(prov.get("previous") or []) + [prov]
    shas, dates = [], []
    for s in sessions:
        sha = short(s.get("git_sha"))
        if sha not in shas:
            shas.append(sha)
        if s.get("utc_time"):
            dates.append(s["utc_time"][:10])
    skipped = sum(1 for r in runs if r.get("status") not in (None, "ok"))
    return {"what": doc["experiment"].get("title", doc["experiment"].get("id", "")),
            "runs": f"{len(runs)}" + (f" ({skipped} not run)" if skipped else ""),
            "commits": ", ".join(shas), "machine": machine(doc.get("environment")),
            "dates": (min(dates) + (f" .. {max(dates)}" if max(dates) != min(dates) else "")) if dates else ""}


def study_entry(doc, name):
    provs = []
    for key in ("provenance", "gmt_provenance"):
        v = doc.get(key)
        provs += v if isinstance(v, list) else [v] if isinstance(v, dict) else []
    shas = []
    gpus = []
    dates = []
    for p in provs:
        sha = short(p.get("git_sha") or p.get("commit"))
        if sha not in shas:
            shas.append(sha)
        g = p.get("gpu") or p.get("machine")
        if g and g not in gpus:
            gpus.append(g)
        d = p.get("date_utc") or p.get("utc_time")
        if d:
            dates.append(d[:10])
    what = doc.get("title") or doc.get("study") or doc.get("definition", "").split("\n")[0] or name
    env = doc.get("environment")
    return {"what": what, "runs": str(len(doc["runs"])) if isinstance(doc.get("runs"), list) else "",
            "commits": ", ".join(shas) if shas else "(inside its files)",
            "machine": ", ".join(gpus) if gpus else machine(env) if isinstance(env, dict) else "",
            "dates": (min(dates) + (f" .. {max(dates)}" if max(dates) != min(dates) else "")) if dates else ""}


def tracked_files(path):
    """The files of `path` git tracks (the index describes the commit, not the working tree); every
    file when git cannot say."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--", os.path.relpath(path, ROOT)], capture_output=True,
                             check=True).stdout.decode()
        return [os.path.join(ROOT, f) for f in out.split("\0") if f and os.path.isfile(os.path.join(ROOT, f))]
    except (OSError, subprocess.CalledProcessError):
        return [f for f in glob.glob(os.path.join(path, "**", "*"), recursive=True) if os.path.isfile(f)]


def folder_entry(path):
    files = tracked_files(path)
    size = sum(os.path.getsize(f) for f in files)
    what = ""
    for readme in ("README.md", "table.md"):
        p = os.path.join(path, readme)
        if os.path.exists(p):
            for line in open(p, encoding="utf-8"):
                if line.startswith("# "):
                    what = line[2:].strip()
                    break
            break
    return {"what": what or "(folder)", "runs": f"{len(files)} files, {size / 1e6:.1f} MB", "commits": "(inside its files)",
            "machine": "", "dates": ""}


def render(folder):
    tag = os.path.basename(os.path.normpath(folder))
    rows = []
    for p in sorted(os.listdir(folder)):
        full = os.path.join(folder, p)
        if p in ("README.md",) or p.startswith("."):
            continue
        if os.path.isdir(full):
            rows.append((p + "/", folder_entry(full)))
            continue
        stem, ext = os.path.splitext(p)
        if ext == ".json":
            try:
                doc = json.load(open(full, encoding="utf-8"))
            except ValueError as e:
                sys.exit(f"results_index: {full}: {e}")
            e = run_experiment_entry(doc) if isinstance(doc.get("experiment"), dict) else study_entry(doc, stem)
            siblings = [x for x in (".md", ".csv", ".png", ".svg") if os.path.exists(os.path.join(folder, stem + x))]
            rows.append((stem + ".{json" + "".join("," + x[1:] for x in siblings) + "}", e))
        elif ext == ".md" and not os.path.exists(os.path.join(folder, stem + ".json")):
            rows.append((p, {"what": {"REPRODUCTION": "Do the papers reproduce? A verdict per claim (scripts/reproduction.py)",
                                      "ACCEPTED_REGRESSIONS": "performance regressions accepted by scripts/perf_history.py --check (hand-kept)"}
                             .get(stem, first_heading(full)), "runs": "", "commits": "", "machine": "", "dates": ""}))
    L = [f"# results/{tag}: index",
         "",
         "Generated by `scripts/results_index.py` from each file's own provenance (do not edit; ctest "
         "`scripts.results_index` fails when it is stale). What the five papers' claims come to: "
         "[REPRODUCTION.md](REPRODUCTION.md). Every run_experiment file names its machine in its `environment` "
         "block; its CPU baselines ran on that machine's cores in the same run. A file's earlier versions: "
         "`git log -- results/" + tag + "/FILE`.",
         "",
         "| file | what | runs | commits | machine | dates |",
         "|---|---|---|---|---|---|"]
    for name, e in rows:
        cell = lambda s: str(s).replace("|", "/").replace("\n", " ")
        L.append(f"| {cell(name)} | {cell(e['what'])} | {cell(e['runs'])} | {cell(e['commits'])} | {cell(e['machine'])} | {cell(e['dates'])} |")
    return "\n".join(L) + "\n"


def first_heading(path):
    for line in open(path, encoding="utf-8"):
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("folders", nargs="*")
    a = ap.parse_args()
    folders = a.folders or sorted(d for d in glob.glob(os.path.join(ROOT, "results", "*"))
                                  if os.path.isdir(d) and not os.path.basename(d).startswith("cpu"))
    stale = 0
    for f in folders:
        text = render(f)
        out = os.path.join(f, "README.md")
        if a.check:
            old = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
            if old != text:
                print(f"results_index: {out} is stale (run scripts/results_index.py {f})", file=sys.stderr)
                stale += 1
        else:
            with open(out, "w", encoding="utf-8") as fh:
                fh.write(text)
            print(f"results_index: wrote {out}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
