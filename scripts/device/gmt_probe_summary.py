#!/usr/bin/env python3
"""Summarises scripts/device/gmt.sh's probe stage: per short induction (--train gmt metrics), the
seconds per EA iteration by phase, evaluations and evaluator calls per iteration, repairs."""
import glob
import json
import os
import sys

for f in sorted(glob.glob(os.path.join(sys.argv[1], "probe_*.json"))):
    if f.endswith(".model.json"):
        continue
    m = json.load(open(f))
    it = max(1, m.get("iterations", 1))
    phases = m.get("breakdown", {})
    per = ", ".join(f"{name} {1e3 * p['seconds'] / it:.3f}" for name, p in sorted(phases.items(), key=lambda kv: -kv[1]["seconds"]))
    print(f"{os.path.basename(f)[6:-5]}: {m['induction_seconds']:.2f} s for {it} it = "
          f"{1e3 * m['induction_seconds'] / it:.3f} ms/it; evals/it {m['evaluations'] / it:.1f}, "
          f"calls {m.get('evaluate_calls')}, repairs {m.get('repairs')}, leaves {m['leaves']}, "
          f"train rmse {m['train']['rmse']:.4g}\n   ms/it by phase: {per}")
