#!/usr/bin/env python3
"""History of committed GPU results, from git.

    perf_history.py EXPERIMENT [--gpu h200] [--metric KEY] [--backend B] [--out DIR]
        The headline metrics of results/<gpu>/EXPERIMENT.json at every commit that changed it:
        a Markdown table (stdout and DIR/EXPERIMENT_history.md) and a PNG plot
        (DIR/EXPERIMENT_history.png; matplotlib, Debian's python3-matplotlib). DIR defaults to
        results/<gpu>/plots.

    perf_history.py --check [--gpu h200 ...] [--threshold 0.10]
        CI's check (.ci/run): every committed results/<gpu>/*.json (a GPU tag: not cpu*) against
        its previous committed version, with `run_experiment --compare --json --common-params
        --min-repetitions 1` (the same run identity on the same GPU kind). A GPU-measured run (a
        device-clock phase in its breakdown) whose headline metric is worse by more than the
        threshold fails the check unless results/<gpu>/ACCEPTED_REGRESSIONS.md lists it under
        "## Accepted regressions" (format below). CPU-baseline runs in the same files are listed,
        not gated: they ran on whatever host CPU the GPU machine had; neither are estimated runs
        (metrics.estimated: scaled or replayed times). A file with no previous committed version
        (a new experiment, a new results/<gpu> folder) has nothing to compare and passes. Exit 0 pass, 1 an
        unrecorded regression, 2 no run_experiment or no git.

Accepted regressions: a Markdown table under the heading "## Accepted regressions" of
results/<gpu>/ACCEPTED_REGRESSIONS.md, one row per accepted regression:

    | experiment | commit | backend | dataset | reason |
    |---|---|---|---|---|
    | vfdt_table4 | 7fd3f08 | cuda | rt_moa | bound_weight "total" grows larger trees (8739f3e) |

`commit` is (a prefix of) the commit that committed the slower version of the file; `backend` and
`dataset` are comma-separated shell-style patterns (`*` for all); `reason` must not be empty.

Headline metrics are the ones run_experiment --compare reports: the rates (metrics.*_per_s) the
experiment's config tables show. Runs are matched on the params both versions record, so a param
added between two versions (with its default) does not hide a run; versions whose runs share no
identity at all are reported as not comparable.
"""
import argparse
import datetime
import fnmatch
import math
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from perf_gate import find_run_experiment  # noqa: E402


def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True, check=True).stdout


def exists_at(sha, path):
    return subprocess.run(["git", "-C", ROOT, "cat-file", "-e", f"{sha}:{path}"], capture_output=True).returncode == 0


def versions(path):
    """[(sha, unix time, subject)] of the commits that changed `path`, oldest first; a commit that
    removed it (moved aside, re-added later) is not a version."""
    out = git("log", "--reverse", "--format=%H %ct %s", "--", path)
    vs = []
    for line in out.splitlines():
        sha, t, subject = (line.split(" ", 2) + [""])[:3]
        if exists_at(sha, path):
            vs.append((sha, int(t), subject))
    return vs


def show(sha, path, tmp):
    dst = os.path.join(tmp, sha[:12] + "_" + os.path.basename(path))
    with open(dst, "w") as f:
        f.write(git("show", f"{sha}:{path}"))
    return dst


def compare(tool, base, new, threshold):
    """run_experiment --compare's JSON report, or (None, error line) when the two are not comparable."""
    r = subprocess.run([tool, "--compare", base, new, "--json", "--common-params", "--min-repetitions", "1",
                        "--threshold", str(threshold)], capture_output=True, text=True, cwd=ROOT)
    if r.returncode in (0, 1):
        return json.loads(r.stdout), ""
    return None, r.stderr.strip().replace("run_experiment: error: --compare: ", "")


def is_results(path):
    try:
        with open(path) as f:
            return json.load(f).get("schema_version") == 1
    except (OSError, ValueError, AttributeError):
        return False


def gpu_dirs(only):
    base = os.path.join(ROOT, "results")
    tags = sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d)) and not d.startswith("cpu"))
    return [t for t in tags if not only or t in only]


ACCEPT_COLUMNS = ["experiment", "commit", "backend", "dataset", "reason"]


def accepted_regressions(readme):
    """Rows of the "## Accepted regressions" table: [{experiment, commit, backend, dataset, reason, line}]."""
    rows, inside = [], False
    try:
        lines = open(readme).read().splitlines()
    except OSError:
        return rows
    for n, line in enumerate(lines, 1):
        if line.startswith("## "):
            inside = line.strip().lower() == "## accepted regressions"
            continue
        if not inside or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:2] == ["experiment", "commit"] or set("".join(cells)) <= set("-: "):
            continue
        if len(cells) != len(ACCEPT_COLUMNS) or not cells[4] or not re.fullmatch(r"[0-9a-f]{7,40}", cells[1]):
            print(f"perf_history: {readme}:{n}: an accepted regression is | experiment | commit (hex) | "
                  f"backend | dataset | reason |, got: {line}", file=sys.stderr)
            raise SystemExit(2)
        rows.append(dict(zip(ACCEPT_COLUMNS, cells), line=n))
    return rows


def matches(value, patterns):
    """`patterns`: comma-separated shell-style patterns ("cuda", "ecoli,thyroid", "*")."""
    return any(fnmatch.fnmatchcase(value, p.strip()) for p in patterns.split(","))


def identity_parts(identity):
    """[family, backend, dataset, options, params, seed] of run_experiment's identity string."""
    try:
        return json.loads(identity)
    except ValueError:
        return ["", "", identity, {}, {}, 0]


def check(args):
    tool = find_run_experiment(args.run_experiment)
    if tool is None:
        print("perf_history: run_experiment not found (build it first: scripts/build.sh)", file=sys.stderr)
        return 2
    failures, accepted, notes, pairs = [], [], [], 0
    # Runs with a worse headline metric that are not gated, by why: "host" (timed on the host CPU),
    # "estimated" (metrics.estimated on either side) -> {(file, old, new): runs}.
    ungated = {"host": {}, "estimated": {}}
    used = set()
    for tag in gpu_dirs(args.gpu):
        readme = os.path.join(ROOT, "results", tag, "ACCEPTED_REGRESSIONS.md")
        accepts = accepted_regressions(readme)
        files = sorted(p for p in git("ls-files", f"results/{tag}/*.json").splitlines() if os.path.dirname(p) == f"results/{tag}")
        with tempfile.TemporaryDirectory(prefix="perf_history.") as tmp:
            for path in files:
                if not is_results(os.path.join(ROOT, path)):
                    continue
                vs = versions(path)
                for (old, _, _), (new, _, subject) in zip(vs, vs[1:]):
                    a, b = show(old, path, tmp), show(new, path, tmp)
                    if not is_results(a):
                        continue
                    rep, err = compare(tool, a, b, args.threshold)
                    err = err.replace(a, f"{old[:7]}:{path}").replace(b, f"{new[:7]}:{path}")
                    pairs += 1
                    what = f"{path} {old[:7]} -> {new[:7]}"
                    if rep is None:
                        notes.append(f"{what}: not comparable: {err}")
                        continue
                    kinds = (rep["base"].get("device"), rep["new"].get("device"))
                    if kinds[0] != kinds[1]:
                        notes.append(f"{what}: not compared: GPU {kinds[0]} vs {kinds[1]}")
                        continue
                    exp = rep["experiment"]
                    for run in rep["runs"]:
                        worse = {k: m for k, m in run["metrics"].items() if m.get("worse")}
                        if not worse:
                            continue
                        sides = (run["base"], run["new"])
                        why = ("host" if any(x.get("clock") != "device" for x in sides) else
                               "estimated" if any(x.get("estimated") for x in sides) else None)
                        if why:
                            k = (path, old[:7], new[:7])
                            ungated[why][k] = ungated[why].get(k, 0) + 1
                            continue
                        _, backend, dataset = identity_parts(run["identity"])[:3]
                        hit = next((x for x in accepts if x["experiment"] == exp and new.startswith(x["commit"]) and
                                    matches(backend, x["backend"]) and matches(dataset, x["dataset"])), None)
                        for k, m in worse.items():
                            row = dict(gpu=tag, experiment=exp, old=old[:7], new=new[:7], run=run["label"], metric=k,
                                       base=m["base"], value=m["new"], ratio=m["ratio"], verdict=run["verdict"],
                                       subject=subject)
                            if hit:
                                used.add((tag, hit["line"]))
                                accepted.append(dict(row, reason=hit["reason"]))
                            else:
                                failures.append(row)
        for x in accepts:
            if (tag, x["line"]) not in used:
                notes.append(f"results/{tag}/ACCEPTED_REGRESSIONS.md:{x['line']}: accepted regression matches nothing "
                             f"({x['experiment']} {x['commit']} {x['backend']} {x['dataset']})")

    def table(rows, extra):
        out = ["| experiment | old → new | run | metric | old | new | new/old | " + extra + " |",
               "|---|---|---|---|---:|---:|---:|---|"]
        for r in rows:
            out.append(f"| {r['experiment']} | {r['old']} → {r['new']} | {r['run']} | {r['metric']} | {r['base']:.3g} | "
                       f"{r['value']:.3g} | {r['ratio']:.3f} | {r.get('reason', r['verdict'])} |")
        return "\n".join(out)

    print(f"GPU results history: {pairs} pair(s) of consecutive committed versions compared "
          f"(threshold {args.threshold:.0%} on the headline metrics)")
    if accepted:
        print(f"\n{len(accepted)} regression(s) accepted by results/<gpu>/ACCEPTED_REGRESSIONS.md:\n")
        print(table(accepted, "reason"))
    worse_text = "with a headline metric worse by more than the threshold"
    why_text = {
        "host": f"CPU-baseline run(s) (no device-clock phase) {worse_text}; they ran on whichever host the GPU machine had "
                "(16 or 32 cores, single-thread speed varying ~30 % between leases: results/h200/ACCEPTED_REGRESSIONS.md), so the GPU "
                "kind does not make them comparable",
        "estimated": f"estimated run(s) (metrics.estimated on either side: a time scaled from fewer iterations or "
                     f"replayed from another run's sampled batches) {worse_text}; their time follows the estimate's inputs "
                     "(the recorded run, the sampled batches, the scale), not only the code",
    }
    for why, runs in ungated.items():
        if runs:
            print(f"\nNot gated: {sum(runs.values())} {why_text[why]}:")
            for (f, o, n), c in sorted(runs.items()):
                print(f"- {f} {o} -> {n}: {c}")
    if notes:
        print("\nNotes:")
        for n in notes:
            print(f"- {n}")
    if failures:
        print(f"\nFAIL: {len(failures)} headline metric(s) worse by more than {args.threshold:.0%} with no line under "
              f"'## Accepted regressions' in results/<gpu>/ACCEPTED_REGRESSIONS.md:\n")
        print(table(failures, "verdict (time)"))
        return 1
    print("\nPASS: no unrecorded regression of a headline metric")
    return 0


# ---------------------------------------------------------------------------------------------
# history of one experiment


def render(args):
    tool = find_run_experiment(args.run_experiment)
    if tool is None:
        print("perf_history: run_experiment not found (build it first: scripts/build.sh)", file=sys.stderr)
        return 2
    gpu = (args.gpu or ["h200"])[0]
    path = f"results/{gpu}/{args.experiment}.json"
    vs = versions(path)
    if not vs:
        print(f"perf_history: {path} has no committed version", file=sys.stderr)
        return 2
    out_dir = args.out or os.path.join(ROOT, "results", gpu, "plots")
    with tempfile.TemporaryDirectory(prefix="perf_history.") as tmp:
        docs = []
        for sha, t, subject in vs:
            p = show(sha, path, tmp)
            if is_results(p):
                with open(p) as f:
                    docs.append((sha, t, json.load(f)))
        # The headline metrics as run_experiment --compare names them (the config's tables).
        newest = show(vs[-1][0], path, tmp)
        rep, err = compare(tool, newest, newest, 0.1)
        if rep is None:
            print(f"perf_history: {err}", file=sys.stderr)
            return 2
    metrics = [m for m in rep["metrics"] if not args.metric or m["key"] == args.metric]
    if not metrics:
        print(f"perf_history: no headline metric{' ' + args.metric if args.metric else ''} in {path}", file=sys.stderr)
        return 2
    # Identity over the params every version records (a param added later does not split a run).
    keys = None
    for _, _, d in docs:
        for r in d["runs"]:
            k = set(r.get("params", {}))
            keys = k if keys is None else keys & k
    keys = keys or set()

    def ident(r):
        p = {k: v for k, v in r.get("params", {}).items() if k in keys}
        return json.dumps([r.get("backend"), r["dataset"].get("name"), r["dataset"].get("options", {}), p, r.get("seed")],
                          sort_keys=True)

    varying = sorted(k for k in keys if len({json.dumps(r["params"].get(k)) for _, _, d in docs for r in d["runs"]}) > 1)
    runs, labels = {}, {}
    for i, (_, _, d) in enumerate(docs):
        for r in d["runs"]:
            if args.backend and r.get("backend") not in args.backend:
                continue
            if r.get("status") != "ok":
                continue
            key = ident(r)
            labels[key] = f"{r.get('backend')} on {r['dataset'].get('name')}" + (
                " (" + ", ".join(f"{k}={r['params'][k]}" for k in varying) + ")" if varying else "")
            for m in metrics:
                v = r.get("metrics", {}).get(m["key"])
                if isinstance(v, (int, float)):
                    runs.setdefault(key, {}).setdefault(m["key"], {})[i] = float(v)
    cols = [f"{sha[:7]} {datetime.datetime.fromtimestamp(t, datetime.timezone.utc):%m-%d %H:%M}" for sha, t, _ in docs]
    os.makedirs(out_dir, exist_ok=True)
    md = [f"# {args.experiment} on {gpu}: headline metrics at every committed version", "",
          f"Source: git history of `{path}` ({len(docs)} version(s); column = the commit that committed the file). "
          "Runs matched on the params every version records; — = not in that version.", ""]
    for m in metrics:
        md += [f"## {m['label']} (`metrics.{m['key']}`)", "", "| run | " + " | ".join(cols) + " |",
               "|---|" + "---:|" * len(cols)]
        for key in sorted(runs, key=lambda k: labels[k]):
            vals = runs[key].get(m["key"], {})
            if vals:
                md.append(f"| {labels[key]} | " + " | ".join(f"{vals[i]:.3g}" if i in vals else "—" for i in range(len(docs))) + " |")
        md.append("")
    text = "\n".join(md)
    print(text)
    md_path = os.path.join(out_dir, f"{args.experiment}_history.md")
    with open(md_path, "w") as f:
        f.write(text)
    png = plot(metrics, runs, labels, cols, os.path.join(out_dir, f"{args.experiment}_history.png"), args.experiment, gpu)
    print(f"perf_history: wrote {md_path}" + (f" and {png}" if png else " (no plot: matplotlib missing)"), file=sys.stderr)
    return 0


def plot(metrics, runs, labels, cols, png, experiment, gpu):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(len(metrics), 1, figsize=(max(6, 1.4 * len(cols) + 4), 3.6 * len(metrics)), squeeze=False)
    x = list(range(len(cols)))
    for ax, m in zip(axes[:, 0], metrics):
        series = {k: v[m["key"]] for k, v in runs.items() if m["key"] in v}
        if len(series) <= 12:  # one line per run
            for k, vals in sorted(series.items(), key=lambda kv: labels[kv[0]]):
                xs = sorted(vals)
                ax.plot(xs, [vals[i] for i in xs], marker="o", label=labels[k])
            ax.set_ylabel(m["label"])
            ax.set_yscale("log")
        else:  # many runs: per backend, the geometric mean of each run's value over its first value
            by_backend = {}
            for k, vals in series.items():
                first = vals[min(vals)]
                for i, v in vals.items():
                    by_backend.setdefault(labels[k].split(" on ")[0], {}).setdefault(i, []).append(v / first)
            for b, pts in sorted(by_backend.items()):
                xs = sorted(pts)
                gm = [2 ** (sum(math.log2(v) for v in pts[i]) / len(pts[i])) for i in xs]
                ax.plot(xs, gm, marker="o", label=f"{b} (geometric mean of {max(len(p) for p in pts.values())} runs)")
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.set_ylabel(f"{m['label']} / first value")
        ax.set_xticks(x)
        ax.set_xticklabels(cols, rotation=30, ha="right", fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axes[0, 0].set_title(f"{experiment} on {gpu}: headline metrics per committed version")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", nargs="?", help="experiment id (results/<gpu>/<experiment>.json)")
    ap.add_argument("--check", action="store_true", help="CI: compare every committed version with the one before")
    ap.add_argument("--gpu", action="append", help="results/<gpu> folder(s) (default: h200 to render, every GPU tag to check)")
    ap.add_argument("--threshold", type=float, default=0.10, help="--check: relative loss of a headline metric that fails (0.10)")
    ap.add_argument("--metric", help="render only this metric key (e.g. gpops_per_s)")
    ap.add_argument("--backend", action="append", help="render only runs of this backend (repeatable)")
    ap.add_argument("--out", help="folder for EXPERIMENT_history.{md,png} (default results/<gpu>/plots)")
    ap.add_argument("--run-experiment", help="the run_experiment binary")
    ap.add_argument("--root", help=argparse.SUPPRESS)  # another checkout (tests)
    args = ap.parse_args(argv)
    global ROOT
    if args.root:
        ROOT = os.path.abspath(args.root)
    try:
        git("rev-parse", "HEAD")
    except (OSError, subprocess.CalledProcessError):
        print("perf_history: not a git checkout: the history comes from git", file=sys.stderr)
        return 2
    if args.check:
        return check(args)
    if not args.experiment:
        ap.error("give EXPERIMENT or --check")
    return render(args)


if __name__ == "__main__":
    sys.exit(main())
