#!/usr/bin/env python3
"""Performance gate over Google Benchmark JSON files: a thin front end of `run_experiment --compare`.

    perf_gate.py BASE.json NEW.json [--threshold 0.10] [--alpha 0.05] [--min-repetitions 9] [--report R.json]
    perf_gate.py --base B1.json B2.json ... --new N1.json N2.json ... [same options]

The second form merges the repetitions of several files per side (the CI gate runs base and new
interleaved, one gpudm_bench process per sample, so every file holds one sample per benchmark).
--min-per-file keeps one sample per file and benchmark, its fastest repetition: the CI gate runs
each sample as a process with a few repetitions (docs/perf-regression.md).

The statistics are not here: `run_experiment --compare` (experiments/compare.cpp) matches the
benchmarks by name and gives, per benchmark, both medians, the ratio, a two-sided Mann-Whitney U
p-value over the repetitions and a verdict; a benchmark fails when its median got slower by more
than --threshold AND p < --alpha. This script prints that table (Markdown), writes the JSON report
with --report, and exits with its status: 0 no significant regression, 1 regression, 2 bad input
(missing file, no common benchmark, fewer than --min-repetitions repetitions, no run_experiment).
docs/perf-regression.md explains the choice of one C++ implementation.

run_experiment is found through --run-experiment, $GPUDM_RUN_EXPERIMENT, then
$GPUDM_BUILD_DIR/experiments/run_experiment and build/experiments/run_experiment.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_run_experiment(explicit=None):
    if explicit:  # named: that one or none
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    candidates = [os.environ.get("GPUDM_RUN_EXPERIMENT")]
    if os.environ.get("GPUDM_BUILD_DIR"):
        candidates.append(os.path.join(os.environ["GPUDM_BUILD_DIR"], "experiments", "run_experiment"))
    candidates.append(os.path.join(ROOT, "build", "experiments", "run_experiment"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"perf_gate: cannot read {path}: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    if "benchmarks" not in doc:
        print(f"perf_gate: {path} is not Google Benchmark JSON (no 'benchmarks' key)", file=sys.stderr)
        raise SystemExit(2)
    return doc


def merge(paths, out_path, min_per_file=False):
    """Writes one Google Benchmark JSON holding every repetition of `paths` (aggregates dropped);
    min_per_file: only each file's fastest repetition of each benchmark (one sample per file)."""
    docs = [load(p) for p in paths]
    benchmarks = []
    for d in docs:
        reps = [b for b in d["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
        if min_per_file:
            best = {}
            for b in reps:
                name = b.get("run_name", b.get("name"))
                if b.get("error_occurred") or "real_time" not in b:
                    best.setdefault(name, b)
                elif name not in best or best[name].get("error_occurred") or to_seconds(b) < to_seconds(best[name]):
                    best[name] = b
            reps = list(best.values())
        benchmarks += reps
    with open(out_path, "w") as f:
        json.dump({"context": docs[0].get("context", {}), "benchmarks": benchmarks}, f)


def to_seconds(b):
    return b["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help="BASE.json NEW.json")
    ap.add_argument("--base", nargs="+", default=[], help="base side: one or more Google Benchmark JSON files")
    ap.add_argument("--new", nargs="+", default=[], help="new side: one or more Google Benchmark JSON files")
    ap.add_argument("--threshold", type=float, default=0.10, help="relative slowdown of the median that fails (default 0.10)")
    ap.add_argument("--alpha", type=float, default=0.05, help="significance level of the U test (default 0.05)")
    ap.add_argument("--min-repetitions", type=int, default=9, help="fewer repetitions is an input error (default 9)")
    ap.add_argument("--min-per-file", action="store_true",
                    help="one sample per file and benchmark: its fastest repetition (the CI gate runs one process "
                         "per sample with a few repetitions; the fastest is the least disturbed by other jobs)")
    ap.add_argument("--report", help="write run_experiment --compare's JSON report here")
    ap.add_argument("--run-experiment", help="the run_experiment binary to use")
    args = ap.parse_args(argv)

    if args.files and (args.base or args.new):
        ap.error("give BASE NEW or --base ... --new ..., not both")
    if args.files:
        if len(args.files) != 2:
            ap.error("expected BASE.json NEW.json")
        base, new = [args.files[0]], [args.files[1]]
    else:
        base, new = args.base, args.new
    if not base or not new:
        ap.error("expected BASE.json NEW.json (or --base ... --new ...)")
    tool = find_run_experiment(args.run_experiment)
    if tool is None:
        print("perf_gate: run_experiment not found (build it: scripts/build.sh --target run_experiment, or set "
              "GPUDM_RUN_EXPERIMENT)", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="perf_gate.") as tmp:
        sides = []
        for name, paths in (("base", base), ("new", new)):
            p = os.path.join(tmp, name + ".json")
            merge(paths, p, args.min_per_file)
            sides.append(p)
        common = [tool, "--compare", sides[0], sides[1], "--threshold", str(args.threshold), "--alpha", str(args.alpha),
                  "--min-repetitions", str(args.min_repetitions)]
        md = subprocess.run(common, capture_output=True, text=True)
        if args.min_per_file:
            print("perf gate: one sample per file: its fastest repetition (--min-per-file)")
        sys.stdout.write(md.stdout.replace(sides[0], "base (" + ", ".join(map(os.path.basename, base[:3])) +
                                           (", ..." if len(base) > 3 else "") + ")")
                         .replace(sides[1], "new (" + ", ".join(map(os.path.basename, new[:3])) +
                                  (", ..." if len(new) > 3 else "") + ")"))
        if md.returncode not in (0, 1):
            sys.stderr.write(md.stderr.replace("run_experiment: error: ", "perf_gate: "))
            return 2
        if args.report:
            js = subprocess.run(common + ["--json"], capture_output=True, text=True)
            with open(args.report, "w") as f:
                f.write(js.stdout)
    print(f"perf gate: {'FAIL' if md.returncode else 'PASS'}")
    return md.returncode


if __name__ == "__main__":
    sys.exit(main())
