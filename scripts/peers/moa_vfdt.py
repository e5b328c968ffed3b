#!/usr/bin/env python3
"""MOA as a live peer of the vfdt family (Tables 1-4 of Marron, Bifet, De Francisci Morales 2014).

Runs MOA itself (moa.jar from the capymoa wheel, fetched and checked by scripts/peers/moa_vfdt.sh)
prequentially with `java -cp moa.jar moa.DoTask "EvaluatePrequential ..."` on the streams of our
tables: each stream is exported by build/tools/vfdt_export (scripts/peers/vfdt_streams.py, the
same export and stream list as the River peer), so MOA learns from the codes our learners see,
in the same order, and every attribute is declared nominal over its codes in the ARFF file (MOA
splits multiway on the codes, as ours and River do); the class is nominal too. MOA's own
generators.RandomTreeGenerator at the paper's RT settings is run as one more stream,
"rt_moa_generator", so that MOA's generator can be set beside our VFML-style RT (rt_vfml).

Mode "tree" (Tables 1 and 3): trees.HoeffdingTree -g 200 -c 1e-7 -t 0.05 -l MC, i.e. the
settings of our vfdt tables (grace period 200, split confidence 1e-7, tie threshold 0.05,
majority-class leaves; MOA's default leaves are NBAdaptive). MOA's other defaults stay: info gain,
pre-pruning with the null split, a 32 MiB tree budget (it does not bind here: without MOA's
sizeofag agent MOA's tree estimates its size as 0), no depth limit (ours: max_depth 20).

Mode "forest" (Tables 2 and 4), 100 trees. The paper (sec. 5) uses "GVFD as a base learner,
online bagging [14] to sample instances for each tree, and ADWIN [1] to detect changes in the
accuracy of the ensemble members, so that trees that decrease in accuracy can be replaced with
new ones", with "the square root of the total number of attributes as the number of random
attributes to split" (sec. 6.1.2: "100 random trees"); its MOA comparison is from 2014. The MOA
forest that matches is "ozabag_adwin" (the default):
    meta.OzaBagAdwin -s 100 -l (trees.RandomHoeffdingTree -g 200 -c 1e-7 -t 0.05 -l MC)
OzaBagAdwin is MOA's online bagging (Oza and Russell, the paper's [14]) with one ADWIN per member
(Bifet and Gavalda, the paper's [1]), Poisson(1) weights, and RandomHoeffdingTree is MOA's
Hoeffding tree whose leaves split on floor(sqrt(attributes)) random attributes; both are by the
paper's second author and both were in MOA in 2014. AdaptiveRandomForest (Gomes et al.) came in
2017, after the paper, and adds what the paper does not have (background trees on warnings,
accuracy-weighted votes, lambda 6 and 60 % of the attributes by default). Where MOA's OzaBagAdwin
and RandomHoeffdingTree differ from the paper's text (MOA has no options for these):
  - RandomHoeffdingTree draws floor(sqrt(numAttributes())) attributes per leaf, where MOA's
    numAttributes() counts the class, and then observes only the first k-1 of the k it drew
    (e.g. RT, 10 attributes: 3 drawn, 2 used; ours and the paper: 3);
  - on a change (an ADWIN cut that raised a member's error estimate) OzaBagAdwin resets only the
    member with the largest ADWIN error estimate, not every member whose error rose; every
    member's ADWIN (delta 0.002) is fed every instance, also when its Poisson weight was 0, with
    the member's 0/1 error measured after it learned the instance;
  - its vote is the sum of the members' normalised class distributions (with MC leaves: the
    leaves' class frequencies), where the paper and our forest count one vote per tree;
  - the members are copies of one prepared tree whose random generators start in the same state.
Forest "arf" (optional, --forests ozabag_adwin,arf) is MOA's ARF set as near our forest's rules
as its options allow: exactly floor(sqrt(d)) attributes per leaf, lambda 1, one ADWIN (0.002) per
tree that resets that tree when its error rose, fed only when the tree learned, no background
trees (-q) and no accuracy weights (-w; the vote still sums class distributions):
    meta.AdaptiveRandomForest -s 100 -l (ARFHoeffdingTree -g 200 -c 1e-7 -t 0.05 -l MC)
        -o (Specified m (integer value)) -m floor(sqrt(d)) -a 1.0 -x (ADWINChangeDetector -a 0.002) -q -w
MOA's classifiers take their random seed from AbstractClassifier's default (1): these classes have
no -r option in this MOA version.

Evaluation: BasicClassificationPerformanceEvaluator (cumulative prequential accuracy, as the
paper's "correctly classified instances divided by the total"), sampled every n/points instances
(-f). The paper gives no evaluation frequency, so the curve has the points of our configs
(curve_points: 100 for the tree, 200 for the forest; figs 8-10), at the same instance counts as
our metrics.curve. MOA's per-instance predictions (-o) give the sliding-window accuracy (window
10,000, as figs 8-10), the majority-class rate of the run's instances, and a check of MOA's
cumulative accuracy at every point.

Time: wall seconds of the JVM (start-up included) and its CPU seconds (user + system of the child,
all JVM threads: JIT and GC too), plus MOA's own "evaluation time (cpu seconds)" (the evaluating
thread only). A stream can be run on a prefix (--tree-rows / --forest-rows, MOA's -i); the JSON
says so (prefix_of_stream, instances vs total_rows). MOA's tree takes seconds on every stream; the
forest of 100 ran at 3,000-20,000 instances/s on a shared 2-core machine (the whole of REC, 5.75M
instances, would take about 30 min there: 2.67M took 14 min; every other stream took at most 6 min).

Output: results/cpu/moa_vfdt.json (runs keyed like results/cpu/river_vfdt.json: dataset, options,
mode, total_rows, so configs can join them as "peers", docs/config-format.md) and a .csv beside it.
"""
import argparse
import csv
import datetime
import hashlib
import json
import math
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import zipfile

from vfdt_streams import DEFAULT_EXPORT_TOOL, ROOT, STREAMS, export, scan_codes, write_results

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from machine_info import cpu_model  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PINS = os.path.join(HERE, "moa.sha256")

TREE_PARAMS = "-g 200 -c 1e-7 -t 0.05 -l MC"  # grace period, split confidence, tie threshold, MC leaves
ADWIN_DELTA = 0.002
WINDOW = 10000
# MOA's RandomTreeGenerator at the paper's RT settings (sec. 6: "10 binary attributes, 2 classes,
# 5 levels and 20% of noise"): 10 nominal attributes of 2 values, no numeric ones, maximum depth 5;
# the other options are MOA's defaults (first leaf level 3, leaf fraction 0.15, seeds 1). MOA's
# generator has no noise of its own: AddNoiseFilter gives every attribute and the class another
# observed value (for binary ones: flips them) with probability 0.2, as the VFML generator's noise.
GENERATOR = "rt_moa_generator"
GENERATOR_OPTIONS = {"rows": 1000000, "tree_seed": 1, "instance_seed": 1, "num_classes": 2, "num_nominals": 10,
                     "num_numerics": 0, "num_vals_per_nominal": 2, "max_tree_depth": 5, "first_leaf_level": 3,
                     "leaf_fraction": 0.15, "noise_seed": 1, "attribute_noise": 0.2, "class_noise": 0.2}
GENERATOR_ATTRIBUTES = 10


def generator_stream(o):
    return ("FilteredStream -s (generators.RandomTreeGenerator -r {tree_seed} -i {instance_seed} -c {num_classes} "
            "-o {num_nominals} -u {num_numerics} -v {num_vals_per_nominal} -d {max_tree_depth} -l {first_leaf_level} "
            "-f {leaf_fraction}) -f (AddNoiseFilter -r {noise_seed} -a {attribute_noise} -c {class_noise})").format(**o)


def read_pins(path=PINS):
    """moa.sha256, in sha256sum's format: the capymoa wheel (whose name pins the version) and moa.jar."""
    pins = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                digest, name = line.split(None, 1)
                pins[name.lstrip("*")] = digest.lower()
    wheel = next(n for n in pins if n.endswith(".whl"))
    return {"wheel": wheel, "wheel_sha256": pins[wheel], "capymoa_version": wheel.split("-")[1],
            "jar_sha256": pins["moa.jar"]}


def default_jar():
    """Where moa_vfdt.sh leaves the jar: $MOA_JAR, else $MOA_CACHE (default ~/.cache/gpudm/moa)/capymoa-<v>/moa.jar."""
    if os.environ.get("MOA_JAR"):
        return os.environ["MOA_JAR"]
    cache = os.environ.get("MOA_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "gpudm", "moa")
    return os.path.join(cache, "capymoa-" + read_pins()["capymoa_version"], "moa.jar")


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def moa_version(jar):
    with zipfile.ZipFile(jar) as z:
        props = z.read("META-INF/maven/nz.ac.waikato.cms.moa/moa/pom.properties").decode()
    return next(line.split("=", 1)[1].strip() for line in props.splitlines() if line.startswith("version="))


def java_version(java):
    p = subprocess.run([java, "-version"], capture_output=True, text=True, check=True)
    return " | ".join(line.strip() for line in (p.stderr or p.stdout).splitlines() if line.strip())


def write_arff(csv_path, arff_path, relation):
    """The exported stream as ARFF: every attribute nominal over the codes 0..max (a code's index is
    the code, as River and our learners see it), the class nominal over 0..max label. Returns the
    scan (names, rows, max codes, max label, label counts)."""
    names, rows, max_code, max_label, counts = scan_codes(csv_path)
    with open(csv_path) as src, open(arff_path, "w") as out:
        next(src)
        out.write(f"@relation {relation}\n\n")
        for n, m in zip(names, max_code):
            out.write(f"@attribute {n} {{{','.join(str(v) for v in range(m + 1))}}}\n")
        out.write(f"@attribute class {{{','.join(str(v) for v in range(max_label + 1))}}}\n\n@data\n")
        for line in src:
            out.write(line)
    return names, rows, max_code, max_label, counts


def learner(mode, forest, trees, attributes):
    if mode == "tree":
        return f"trees.HoeffdingTree {TREE_PARAMS}", "moa.classifiers.trees.HoeffdingTree"
    if forest == "ozabag_adwin":
        return (f"meta.OzaBagAdwin -s {trees} -l (trees.RandomHoeffdingTree {TREE_PARAMS})",
                f"moa.classifiers.meta.OzaBagAdwin({trees} x RandomHoeffdingTree, Poisson(1), ADWIN {ADWIN_DELTA} "
                "per tree, the worst tree reset on a rise; floor(sqrt(d+1)) attributes drawn per leaf, one fewer used)")
    if forest == "arf":
        m = max(1, int(math.floor(math.sqrt(attributes))))
        return (f"meta.AdaptiveRandomForest -s {trees} -l (ARFHoeffdingTree {TREE_PARAMS}) "
                f"-o (Specified m (integer value)) -m {m} -a 1.0 -x (ADWINChangeDetector -a {ADWIN_DELTA}) -q -w",
                f"moa.classifiers.meta.AdaptiveRandomForest({trees} trees, m={m} = floor(sqrt(d)), lambda 1, "
                f"ADWIN {ADWIN_DELTA} per tree reset on a rise, no background trees, unweighted vote)")
    raise SystemExit(f"moa_vfdt: unknown forest {forest!r} (ozabag_adwin, arf)")


def parse_dump(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        raise RuntimeError(f"MOA wrote no learning curve to {path}")
    header = rows[0]
    data = [[float(v) if v not in ("", "?") else None for v in r] for r in rows[1:]]
    return header, data


def read_predictions(path):
    pred, true = [], []
    with open(path) as f:
        for line in f:
            p, t = line.split(",")
            pred.append(int(p))
            true.append(int(t))
    return pred, true


def run_moa(java, xmx, jar, task, workdir):
    """One JVM: returns wall seconds, the child's CPU seconds (user+sys, every JVM thread), max RSS."""
    cmd = [java, f"-Xmx{xmx}", "-cp", jar, "moa.DoTask", task]
    with open(os.path.join(workdir, "moa.out"), "w") as out, open(os.path.join(workdir, "moa.err"), "w") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    with open(os.path.join(workdir, "moa.err"), errors="replace") as f:
        tail = f.read()[-3000:].replace("\r", "\n")
    return cmd, p.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, tail


def evaluate(args, jar, stream_spec, mode, forest, attributes, limit, points, tmp):
    """Runs EvaluatePrequential once; returns the run's fields (without the stream's)."""
    dump = os.path.join(tmp, "dump.csv")
    preds = os.path.join(tmp, "predictions.pred")
    for p in (dump, preds):  # MOA appends to both files
        if os.path.exists(p):
            os.remove(p)
    spec, label = learner(mode, forest, args.trees, attributes)
    freq = max(1, limit // points)
    task = (f"EvaluatePrequential -l ({spec}) -s ({stream_spec}) -e BasicClassificationPerformanceEvaluator "
            f"-i {limit} -f {freq} -d {dump} -o {preds}")
    cmd, rc, wall, cpu, rss, tail = run_moa(args.java, args.xmx, jar, task, tmp)
    if rc != 0 or not os.path.exists(dump) or not os.path.exists(preds):
        raise RuntimeError(f"MOA failed (exit {rc}):\n{tail}")
    header, data = parse_dump(dump)
    col = {h: i for i, h in enumerate(header)}
    pred, true = read_predictions(preds)
    n = len(pred)
    correct = [0] * (n + 1)
    for i in range(n):
        correct[i + 1] = correct[i] + (pred[i] == true[i])
    xs, acc, window, secs = [], [], [], []
    for r in data:
        x = int(r[col["learning evaluation instances"]])
        xs.append(x)
        secs.append(r[col["evaluation time (cpu seconds)"]])
        acc.append(r[col["classifications correct (percent)"]])
        w0 = max(0, x - WINDOW)
        window.append(round(100.0 * (correct[x] - correct[w0]) / (x - w0), 4))
        if abs(acc[-1] - 100.0 * correct[x] / x) > 1e-6:
            raise RuntimeError(f"MOA's accuracy at {x} ({acc[-1]}) differs from its predictions' "
                               f"({100.0 * correct[x] / x})")
    counts = {}
    for t in true:
        counts[t] = counts.get(t, 0) + 1
    last = data[-1]
    return {
        "mode": mode,
        "forest": forest if mode == "forest" else None,
        "vote": "soft" if mode == "forest" else "tree",
        **({"detector": "worst_on_rise" if forest == "ozabag_adwin" else "rise"} if mode == "forest" else {}),
        **({"trees": args.trees} if mode == "forest" else {}),
        "model": label,
        "moa_learner": spec,
        # the stream's ARFF file, the dump and the predictions live in a temporary folder: "<tmp>"
        "moa_task": task.replace(tmp, "<tmp>"),
        "command": shlex.join(cmd).replace(tmp, "<tmp>"),
        "instances": n,
        "accuracy": round(100.0 * correct[n] / n, 4) if n else None,
        "majority_rate": round(100.0 * max(counts.values()) / n, 4) if n else None,
        "kappa": last[col["Kappa Statistic (percent)"]],
        "final_window_accuracy": window[-1] if window else None,  # the last `window` instances
        "curve": {"instances": xs, "accuracy": [round(a, 4) for a in acc], "window_accuracy": window,
                  "window": WINDOW, "every": freq, "eval_cpu_s": [round(t, 3) for t in secs]},
        "final_measurements": {h: last[i] for i, h in enumerate(header) if i < len(last)},
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "moa_eval_cpu_s": last[col["evaluation time (cpu seconds)"]],
        "max_rss_mb": round(rss / 1024.0, 1),
        "instances_per_s": round(n / wall, 1) if wall > 0 else None,
        "clock": "wall_s, cpu_s: the JVM process (start-up included; cpu_s = user+sys of all its threads); "
                 "moa_eval_cpu_s: MOA's evaluating thread",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jar", default=None, help="moa.jar (default: moa_vfdt.sh's cache, $MOA_JAR or $MOA_CACHE)")
    ap.add_argument("--java", default=os.environ.get("JAVA", "java"))
    ap.add_argument("--xmx", default="4g", help="the JVM's -Xmx")
    ap.add_argument("--export-tool", default=os.environ.get("GPUDM_VFDT_EXPORT", DEFAULT_EXPORT_TOOL))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "cpu", "moa_vfdt.json"))
    ap.add_argument("--tree-rows", type=int, default=0, help="prefix for the single tree (0 = all)")
    ap.add_argument("--forest-rows", type=int, default=0, help="prefix for the forest (0 = all)")
    ap.add_argument("--streams", default=",".join([n for n, _ in STREAMS] + [GENERATOR]))
    ap.add_argument("--stream-rows", type=int, default=0,
                    help="export each catalog stream with options rows=N (a shorter stream, as the configs' smoke runs)")
    ap.add_argument("--generator-rows", type=int, default=GENERATOR_OPTIONS["rows"],
                    help=f"instances of {GENERATOR} (the paper's RT: 1,000,000)")
    ap.add_argument("--modes", default="tree,forest")
    ap.add_argument("--forests", default="ozabag_adwin", help="forests to run: ozabag_adwin (the paper's MOA forest), arf")
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--tree-curve-points", type=int, default=100)
    ap.add_argument("--forest-curve-points", type=int, default=200)
    args = ap.parse_args()

    jar = os.path.abspath(args.jar or default_jar())
    if not os.path.exists(jar):
        raise SystemExit(f"moa_vfdt: no MOA jar at {jar} (scripts/peers/moa_vfdt.sh fetches it)")
    pins = read_pins()
    jar_sha = sha256_of(jar)
    if jar_sha != pins["jar_sha256"]:
        raise SystemExit(f"moa_vfdt: {jar} has sha256 {jar_sha}, not the pinned {pins['jar_sha256']} ({PINS})")
    version = moa_version(jar)
    jversion = java_version(args.java)

    wanted = args.streams.split(",")
    modes = args.modes.split(",")
    forests = args.forests.split(",")
    known = {n for n, _ in STREAMS} | {GENERATOR}
    for n in wanted:
        if n not in known:
            raise SystemExit(f"moa_vfdt: unknown stream {n!r} (known: {', '.join(sorted(known))})")

    def key(r):
        return (r["dataset"], r["mode"], r.get("forest") or "")

    runs = []
    failures = []
    redo = {(n, m, f if m == "forest" else "") for n in wanted for m in modes for f in forests}
    if os.path.exists(args.out):  # keep the runs not redone now
        with open(args.out) as f:
            runs = [r for r in json.load(f).get("runs", []) if key(r) not in redo]

    with tempfile.TemporaryDirectory(prefix="moa_vfdt_") as tmp:
        for name in wanted:
            if name == GENERATOR:
                options = dict(GENERATOR_OPTIONS, rows=args.generator_rows)
                stream_spec = generator_stream(options)
                attributes, total, stream_majority = GENERATOR_ATTRIBUTES, options["rows"], None
                source = "MOA's generators.RandomTreeGenerator (+ AddNoiseFilter), generated inside the JVM"
            else:
                options = dict(dict(STREAMS)[name])
                if args.stream_rows:
                    options["rows"] = args.stream_rows
                csv_path = os.path.join(tmp, name + ".csv")
                arff = os.path.join(tmp, name + ".arff")
                try:
                    export(args.export_tool, name, options, csv_path)
                except subprocess.CalledProcessError as e:
                    print(f"moa_vfdt: {name}: export failed ({e}); skipped", file=sys.stderr)
                    failures.append(name)
                    continue
                names, total, _, _, counts = write_arff(csv_path, arff, "gpudm_" + name)
                os.remove(csv_path)
                attributes = len(names)
                stream_majority = round(100.0 * max(counts.values()) / total, 4) if total else None
                stream_spec = f"ArffFileStream -f {arff} -c -1"
                source = "build/tools/vfdt_export codes, every attribute nominal (ARFF)"
            combos = [(m, f) for m in modes for f in (forests if m == "forest" else [None])]
            for mode, forest in combos:
                rows = args.tree_rows if mode == "tree" else args.forest_rows
                limit = min(rows, total) if rows else total
                points = args.tree_curve_points if mode == "tree" else args.forest_curve_points
                try:
                    run = evaluate(args, jar, stream_spec, mode, forest, attributes, limit, points, tmp)
                except RuntimeError as e:
                    print(f"moa_vfdt: {name} {mode} {forest or ''}: {e}", file=sys.stderr)
                    failures.append(f"{name}/{mode}")
                    continue
                if stream_majority is None:  # the generator's stream is only seen through MOA's predictions
                    stream_majority = run["majority_rate"] if limit == total else None
                run = {
                    "dataset": name,
                    "options": options,
                    **run,
                    "attributes": attributes,
                    "total_rows": total,
                    "prefix_of_stream": run["instances"] < total,
                    "stream_majority_rate": stream_majority,
                    "source": source,
                    "moa_version": version,
                    "argv": sys.argv,
                    "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                }
                print(f"moa_vfdt: {name} {mode} {forest or ''}: {run['instances']}/{total} instances, accuracy "
                      f"{run['accuracy']:.2f} % (majority {run['majority_rate']:.2f} %), {run['wall_s']} s wall, "
                      f"{run['cpu_s']} s CPU", file=sys.stderr)
                runs.append(run)
            if name != GENERATOR:
                os.remove(arff)

    doc = {
        "schema": "gpudm moa peer 1",
        "moa_version": version,
        "capymoa_version": pins["capymoa_version"],
        "capymoa_wheel": pins["wheel"],
        "capymoa_wheel_sha256": pins["wheel_sha256"],
        "jar_sha256": jar_sha,
        "java_version": jversion,
        "java_options": f"-Xmx{args.xmx}",
        "host": socket.gethostname(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "load_average_at_end": [round(v, 2) for v in os.getloadavg()],
        "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "argv": sys.argv,  # of the last invocation; each run has its own
        "note": "Streams exported by vfdt_export (codes as the vfdt learners see them), all attributes nominal in the "
                "ARFF; rt_moa_generator is MOA's RandomTreeGenerator at the paper's RT settings. Prefix runs: "
                "accuracy over the first `instances` of `total_rows` (MOA's -i). accuracy and the curve are MOA's "
                "cumulative prequential accuracy (BasicClassificationPerformanceEvaluator); window_accuracy is over "
                "the last `window` instances, from MOA's per-instance predictions. argv: the last invocation (each run "
                "has its own). See scripts/peers/moa_vfdt.py.",
        "runs": sorted(runs, key=key),
    }
    write_results(args.out, doc,
                  ["dataset", "mode", "forest", "instances", "total_rows", "accuracy_pct", "majority_rate_pct",
                   "stream_majority_rate_pct", "wall_s", "cpu_s", "moa_eval_cpu_s", "instances_per_s"],
                  [[r["dataset"], r["mode"], r.get("forest") or "", r["instances"], r["total_rows"], r["accuracy"],
                    r["majority_rate"], r["stream_majority_rate"], r["wall_s"], r["cpu_s"], r["moa_eval_cpu_s"],
                    r["instances_per_s"]] for r in doc["runs"]])
    print(f"moa_vfdt: wrote {args.out}", file=sys.stderr)
    if failures:
        raise SystemExit(f"moa_vfdt: failed: {', '.join(failures)}")


if __name__ == "__main__":
    main()
