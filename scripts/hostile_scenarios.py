#!/usr/bin/env python3
"""Issue 16's hostile scenarios (docs/reliability.md) run against one run_experiment binary, one line
each (exit status, last stderr line, what the results file holds). Usage:
  scripts/hostile_scenarios.py BUILD/experiments/run_experiment
with GPUDM_DATA_DIR naming the real datasets (iris, pol). Run it on an old and a new binary to see
which scenarios failed before and pass now. Works in a temporary folder; writes nothing else."""
import json, os, signal, subprocess, sys, tempfile, time, glob
if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
    sys.exit(__doc__)
BIN = os.path.abspath(sys.argv[1])
env = dict(os.environ)
if "GPUDM_DATA_DIR" not in env:
    sys.exit("hostile_scenarios.py: set GPUDM_DATA_DIR (the folder with iris and pol)")
env["GPUDM_DATA_DIR"] = os.path.abspath(env["GPUDM_DATA_DIR"])
W = tempfile.mkdtemp(prefix="hostile-")
os.chdir(W)
def run(args, timeout=120):
    try:
        p = subprocess.run([BIN] + args, capture_output=True, text=True, timeout=timeout, env=env)
        err = [l for l in p.stderr.splitlines() if l.strip() and "[" not in l[:40] or "error" in l.lower()]
        return p.returncode, (err[-1] if err else "")[:150]
    except subprocess.TimeoutExpired:
        return "timeout", ""
def cfg(name, body):
    with open(name, "w") as f: f.write(body if isinstance(body, str) else json.dumps(body))
    return name
def runs_in(path):
    try: d = json.load(open(path)); return len(d["runs"]), [r.get("status") for r in d["runs"]][:3], [len(r.get("samples", r.get("timing", {}).get("samples", []))) if isinstance(r, dict) else None for r in d["runs"]][:2]
    except Exception as e: return "unreadable: %s" % type(e).__name__
base = {"experiment": "h", "family": "pittsburgh", "datasets": ["iris"], "params": {"mode": "evaluate", "population": 4},
        "backends": ["sequential"], "warmup": 0, "repetitions": 1}
def with_(**kw):
    d = json.loads(json.dumps(base)); d.update(kw); return d
out = []
def rep(name, res): print(f"{name:48s} {res}", flush=True)
# A/B repetitions
for reps in (2147483648, 4294967297):
    rc, e = run([cfg("a.json", with_(repetitions=reps)), "-o", "oA", "-q"])
    rep(f"repetitions {reps}", (rc, e, runs_in("oA/h.json") if os.path.exists("oA/h.json") else "no file"))
# C deep config / D deep comment --smoke
deep = "[" * 100000 + "]" * 100000
cfg("c.json", json.dumps(with_())[:-1].replace('"repetitions": 1', '"repetitions": ' + deep) + "}")
rep("config value nested 100,000 deep", run(["c.json", "-o", "oC", "-q"]))
cfg("d.json", json.dumps(with_(smoke={"repetitions": 1}))[:-1] + ', "comment": ' + deep + "}")
rep("deep comment under --smoke", run(["d.json", "--smoke", "-o", "oD", "-q"]))
# E deep gmt model
lv = 20000
tree = ('{"attribute": 0, "threshold": 0.5, "right": {"leaf": true, "intercept": 1}, "left": ' * lv) + '{"leaf": true, "intercept": 0}' + "}" * lv
POL = json.dumps(["f%d" % i for i in range(1, 49)])
cfg("m.json", '{"format": "gpudm-gmt-model", "version": 1, "attributes": ' + POL + ', "tree": ' + tree + "}")
rep("--predict gmt model nested 20,000 deep", run(["--predict", "m.json", "--dataset", "pol"]))
# K gmt model attribute 4294967296
cfg("k.json", json.dumps({"format": "gpudm-gmt-model", "version": 1, "attributes": json.loads(POL), "tree": {"attribute": 4294967296, "threshold": 0.5, "left": {"leaf": True, "intercept": 0}, "right": {"leaf": True, "intercept": 1}}}))
with open("reg.csv", "w") as f: f.write("a,b,y\n1,2,0.5\n3,4,1.5\n5,6,2.5\n7,8,3.5\n")
rep("model node attribute 4294967296", run(["--predict", "k.json", "--dataset", "pol"]))
# I / M population
rep("population 4294967298", run([cfg("i.json", with_(params={"mode": "evaluate", "population": 4294967298})), "-o", "oI", "-q"]))
rep("population 0", run([cfg("m0.json", with_(params={"mode": "evaluate", "population": 0})), "-o", "oM", "-q"]))
# J/N/O population files
def pop(indiv, **hdr):
    d = {"format": "gpudm-pittsburgh-population", "version": 1}; d.update(hdr); d["individuals"] = [indiv]; return d
ev = ["--evaluate", "pittsburgh", "--dataset", "iris", "--population"]
rep("default_class 4294967296", run(ev + [cfg("j.json", pop({"default_class": 4294967296, "rules": []}))]))
rep("header attributes 5 on iris (4)", run(ev + [cfg("n.json", pop({"default_class": 0, "rules": []}, attributes=5, classes=3))]))
rep("header attributes 3 on iris (4)", run(ev + [cfg("n3.json", pop({"default_class": 0, "rules": []}, attributes=3, classes=3))]))
rep("threshold 1e39", run(ev + [cfg("o.json", '{"format":"gpudm-pittsburgh-population","version":1,"individuals":[{"default_class":0,"rules":[{"antecedent":[">",0,1e39],"consequent":0}]}]}')]))
rep("unknown key in a rule", run(ev + [cfg("o2.json", pop({"default_class": 0, "rules": [{"antecedent": [], "consequent": 0, "weight": 2}]}))]))
# L CLI integers
rep("--train gmt --cv abc", run(["--train", "gmt", "--dataset", "pol", "--cv", "abc"]))
rep("--train gmt --seed -1", run(["--train", "gmt", "--dataset", "pol", "--seed", "-1", "--param", "iterations=1", "--model-out", "seed.json"], 60))
try: rep("  seed recorded in the model", json.load(open("seed.json"))["info"].get("seed"))
except Exception as e: rep("  seed recorded in the model", "no model file")
# P large sweep, Q rows 1e12
t = time.time(); r = run([cfg("p.json", with_(params={"mode": "evaluate"}, sweep={"population": list(range(1, 1001)), "rules_per_individual": list(range(0, 1000))})), "-n"], 60)
rep("1e6-run sweep (--dry-run)", (r, "%.1f s" % (time.time() - t)))
rep("generator rows 1e12", run([cfg("q.json", json.dumps(with_()).replace('"iris"', '{"name": "poker_full", "options": {"rows": 1000000000000}}')), "-o", "oQ", "-q"]))
# R user file
with open("my.csv", "w") as f: f.write("a,b,y\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n")
rep("--evaluate --dataset my.csv", run(["--evaluate", "pittsburgh", "--dataset", "my.csv", "--population", cfg("r.json", pop({"default_class": 0, "rules": []}))]))
# F/G/H concurrency and interruption
slow = with_(datasets=[{"name": "poker_full", "options": {"rows": 300000}}], params={"mode": "evaluate"},
             sweep={"population": [40, 41, 42, 43, 44, 45]}, repetitions=3)
cfg("s.json", slow)
t = time.time(); rc, e = run(["s.json", "-o", "oS", "-q"], 300); full = time.time() - t
rep("complete run (6 runs)", (rc, "%.1f s" % full, runs_in("oS/h.json")))
cfg("s2.json", dict(slow, backends=["sequential", "openmp"]))
procs = [subprocess.Popen([BIN, "s2.json", "-o", "oF", "-q", "--resume", "-b", b], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for b in ("sequential", "openmp")]
res = [(p.wait(), p.stderr.read().strip().splitlines()[-1:] ) for p in procs]
rep("two writers of one file", (res, runs_in("oF/h.json")))
p = subprocess.Popen([BIN, "s.json", "-o", "oS", "-q"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(full / 3); p.send_signal(signal.SIGINT); p.wait()
rep("rerun without --resume, interrupted", runs_in("oS/h.json"))
p = subprocess.Popen([BIN, "s.json", "-o", "oK", "-q"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(full / 2); p.kill(); p.wait()
left = glob.glob("oK/*.tmp*")
rc, e = run([cfg("ok.json", with_()), "-o", "oK", "-q"], 60)  # a valid config: the runner's start removes stale temp files
rep("kill -9: temp files left / after next run", (left, glob.glob("oK/*.tmp*")))
print("workdir", W)
