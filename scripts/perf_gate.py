#!/usr/bin/env python3
"""Performance gate over two Google Benchmark JSON files.

    perf_gate.py BASE.json NEW.json [--threshold 0.15] [--alpha 0.05] [--min-repetitions 9]

For every benchmark present in both files, compares the repetitions' wall times (real_time;
for CUDA benchmarks that is the event-timed manual time) with a two-sided Mann-Whitney U test
and fails when the median got slower by more than --threshold AND p < --alpha. Google's
compare.py never fails a build by itself, so the verdict is ours; the statistics are its own
(Debian's libbenchmark-tools: /usr/share/benchmark/compare.py and its gbench package) when it
is installed, else scipy.stats.mannwhitneyu (the GPU machine), else a normal approximation.

Run the benchmarks with --benchmark_repetitions=9 (or more) and without
--benchmark_report_aggregates_only, so the raw repetitions are in the JSON.

Exit status: 0 no significant regression, 1 regression, 2 bad input (missing file, no common
benchmark, too few repetitions).
"""
import argparse
import glob
import json
import math
import os
import statistics
import subprocess
import sys


def find_compare_py():
    """Path of Google Benchmark's compare.py, or None."""
    env = os.environ.get("GPUDM_COMPARE_PY")
    if env is not None:
        return env if os.path.isfile(env) else None
    candidates = ["/usr/share/benchmark/compare.py"]
    try:
        out = subprocess.run(["dpkg", "-L", "libbenchmark-tools"], capture_output=True, text=True, check=False).stdout
        candidates = [l for l in out.splitlines() if l.endswith("/compare.py")] + candidates
    except OSError:
        pass
    candidates += glob.glob("/usr/share/*/benchmark/tools/compare.py") + glob.glob("/usr/local/share/benchmark/compare.py")
    for c in candidates:
        if os.path.isfile(c):
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


def to_seconds(value, unit):
    return value * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def repetitions(doc):
    """{benchmark name: [real_time seconds of each repetition]} (aggregates and errors skipped)."""
    out = {}
    for b in doc["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"])
        out.setdefault(name, []).append(to_seconds(b["real_time"], b.get("time_unit", "ns")))
    return out


def utest_normal(a, b):
    """Two-sided Mann-Whitney U p-value, normal approximation with tie correction."""
    n1, n2 = len(a), len(b)
    allv = sorted((v, i) for i, v in enumerate(list(a) + list(b)))
    ranks = [0.0] * (n1 + n2)
    i, ties = 0, 0.0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1][0] == allv[i][0]:
            j += 1
        r = (i + j) / 2.0 + 1.0
        for k in range(i, j + 1):
            ranks[allv[k][1]] = r
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2.0
    mu = n1 * n2 / 2.0
    n = n1 + n2
    sigma = math.sqrt(n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1))))
    if sigma == 0:
        return 1.0
    z = (abs(u1 - mu) - 0.5) / sigma
    return max(0.0, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0))))


def pvalues_with_compare_py(compare_py, base, new):
    """{name: time p-value} from gbench.report (compare.py's own U test); prints its report."""
    sys.path.insert(0, os.path.dirname(compare_py))
    import gbench.report as report  # noqa: E402
    import gbench.util as util  # noqa: E402

    j1 = util.sort_benchmark_results(base)
    j2 = util.sort_benchmark_results(new)
    diff = report.get_difference_report(j1, j2, utest=True)
    for line in report.print_difference_report(diff, True, True, 0.05, False):
        print(line)
    out = {}
    for entry in diff:
        u = entry.get("utest") or {}
        if entry.get("run_type") != "aggregate" and "time_pvalue" in u:
            out[entry["name"]] = u["time_pvalue"]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--threshold", type=float, default=0.15, help="relative slowdown of the median that fails (default 0.15)")
    ap.add_argument("--alpha", type=float, default=0.05, help="significance level of the U test (default 0.05)")
    ap.add_argument("--min-repetitions", type=int, default=9, help="fewer repetitions is an input error (default 9)")
    ap.add_argument("--report", help="write the verdicts as JSON here")
    args = ap.parse_args(argv)

    base, new = load(args.base), load(args.new)
    rb, rn = repetitions(base), repetitions(new)
    common = sorted(set(rb) & set(rn))
    if not common:
        print("perf_gate: no benchmark is present in both files", file=sys.stderr)
        return 2
    few = [n for n in common if min(len(rb[n]), len(rn[n])) < args.min_repetitions]
    if few:
        print(f"perf_gate: {len(few)} benchmark(s) have fewer than {args.min_repetitions} repetitions "
              f"(e.g. {few[0]}: {len(rb[few[0]])} vs {len(rn[few[0]])}); rerun with "
              f"--benchmark_repetitions={args.min_repetitions}", file=sys.stderr)
        return 2

    compare_py = find_compare_py()
    pvals = {}
    if compare_py:
        method = f"compare.py U test ({compare_py})"
        try:
            pvals = pvalues_with_compare_py(compare_py, base, new)
        except Exception as e:  # an incompatible compare.py must not hide the verdict
            print(f"perf_gate: compare.py failed ({e}); falling back", file=sys.stderr)
            compare_py = None
    if not compare_py:
        try:
            if os.environ.get("GPUDM_PERF_GATE_NO_SCIPY"):
                raise ImportError("disabled by GPUDM_PERF_GATE_NO_SCIPY")
            from scipy.stats import mannwhitneyu

            method = "scipy.stats.mannwhitneyu (compare.py not found)"

            def utest(a, b):
                return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
        except ImportError:
            method = "normal-approximation U test (neither compare.py nor scipy found)"
            utest = utest_normal
        print(f"perf_gate: {method}")
        pvals = {n: utest(rb[n], rn[n]) for n in common}

    verdicts, regressions = [], 0
    for n in common:
        mb, mn = statistics.median(rb[n]), statistics.median(rn[n])
        change = (mn - mb) / mb if mb > 0 else 0.0
        p = pvals.get(n)
        if p is None:  # compare.py gives no p-value when all samples are equal
            p = 1.0
        regressed = change > args.threshold and p < args.alpha
        regressions += regressed
        verdicts.append({"name": n, "median_base_s": mb, "median_new_s": mn, "change": change, "pvalue": p,
                         "repetitions": [len(rb[n]), len(rn[n])], "regressed": bool(regressed)})

    width = max(len(v["name"]) for v in verdicts)
    print(f"\nperf gate: threshold +{args.threshold:.0%} on the median, alpha {args.alpha}; {method}")
    for v in verdicts:
        flag = "REGRESSION" if v["regressed"] else "ok"
        print(f"  {v['name']:<{width}}  {v['change']:+8.1%}  p={v['pvalue']:.4f}  {flag}")
    only = sorted(set(rb) ^ set(rn))
    if only:
        print(f"  ({len(only)} benchmark(s) present in only one file were not compared)")
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"method": method, "threshold": args.threshold, "alpha": args.alpha, "verdicts": verdicts}, f, indent=2)
    print(f"perf gate: {'FAIL' if regressions else 'PASS'} ({regressions} significant regression(s) of {len(verdicts)})")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
