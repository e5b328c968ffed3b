#!/usr/bin/env bash
# Profile of the shared rule engine on KDDcup: GPops/s of the two fused rule
# kernels (the rule engine's fast path, backends/cuda/rules/kernels.cuh, and pittsburgh's
# decision-list kernel, backends/cuda/pittsburgh/kernels.cuh, both on the device functions of
# backends/cuda/rules/device.cuh) on KDDcup and Poker (1,025,010 hands) at population 100, per
# layout and rows per thread, then Nsight Compute on one launch of each.
#   OUT=$OUT scripts/device/rules_profile.sh [STAGE...]          (default: build timing ncu)
# Stages (estimated on one H100/H200 with 16 cores):
#   build   run_all.sh build of run_experiment (skipped when the binary exists)     ~3 min cold
#   timing  run_experiment on two generated configs, then a table of GPops/s:       ~2 min
#             engine (gp_rules, Bojarczuk, population 100, 2 generations: 3 evaluations a
#               repetition): features f32 | f16x2 x rows_per_thread 0 (policy) | 1 | 2 | 4;
#             pittsburgh (evaluate, population 100): features f32 | f16x2.
#           "f16x2" is the ranked fp16 codes (algorithms/rules/ranked.hpp) for both; the committed
#           numbers of pittsburgh's exact-fp16 f16x2 layout (results/<gpu>/pitt_layouts.json) are
#           printed beside as "f16x2 exact (before)".
#   ncu     ncu --clock-control none, sections SpeedOfLight LaunchStats Occupancy WarpStateStats
#           InstructionStats, on the first fused_kernel launch of: {engine, pittsburgh} x
#           {kddcup, poker} x {f32, f16x2}, each a one-evaluation run; prints duration, issue
#           and warp metrics, the top stall reasons and warp instructions per GPop.  ~5 min
# Split across calls if a call would pass the 10-minute limit: "build timing", then "ncu".
# RP_DATASETS (default "kddcup poker") and RP_FAMILIES (default "engine pittsburgh") narrow the
# ncu stage. Results and logs: $OUT/rules_profile/ (results JSON, ncu reports as text).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. "$ROOT/scripts/device/common.sh"  # BUILD, GPUDM_DATA_DIR
OUT="${OUT:-$ROOT/out}"
DIR="$OUT/rules_profile"
mkdir -p "$DIR"
T0=$(date +%s)
stamp() { echo "[rules_profile $(( $(date +%s) - T0 ))s] $*" >&2; }
status=0
STAGES=("${@:-build timing ncu}")
[ "${#STAGES[@]}" = 1 ] && read -r -a STAGES <<<"${STAGES[0]}"
RUN="$BUILD/experiments/run_experiment"
STALLS="$(ncu_stall_metrics)"
POKER='{"name": "poker_full", "options": {"rows": 1025010}}'

dataset_json() { case "$1" in poker) echo "$POKER" ;; *) echo "\"$1\"" ;; esac; }

# engine_config NAME DATASETS_JSON FEATURES_JSON ROWS_PER_THREAD_JSON GENERATIONS REPS
engine_config() {
  cat >"$DIR/$1.json" <<JSON
{"experiment": "$1", "family": "gp_rules", "datasets": $2,
 "params": {"algorithm": "bojarczuk", "population": 100, "generations": $5, "stop_when_perfect": false},
 "cases": [{"backend": "cuda", "params": {"path": "fast", "features": $3, "rows_per_thread": $4}}],
 "seeds": [1], "warmup": 0, "repetitions": $6}
JSON
}
# pitt_config NAME DATASETS_JSON FEATURES_JSON WARMUP REPS
pitt_config() {
  cat >"$DIR/$1.json" <<JSON
{"experiment": "$1", "family": "pittsburgh", "datasets": $2,
 "params": {"mode": "evaluate", "population": 100, "validate_gpops_budget": 50000000.0},
 "cases": [{"backend": "cuda", "params": {"path": "fast", "features": $3}}],
 "seeds": [1], "warmup": $4, "repetitions": $5}
JSON
}

for s in "${STAGES[@]}"; do
  case "$s" in
    build)
      if [ -x "$RUN" ]; then stamp "build: $RUN exists"; continue; fi
      stamp "build run_experiment"
      GPUDM_BUILD_TARGETS="run_experiment" BUILD="$BUILD" OUT="$OUT" bash "$ROOT/scripts/device/run_all.sh" build \
        >"$DIR/build.log" 2>&1 || { status=1; tail -20 "$DIR/build.log" >&2; } ;;
    timing)
      engine_config rp_engine "[\"kddcup\", $POKER]" '["f32", "f16x2"]' '[0, 1, 2, 4]' 2 3
      pitt_config rp_pittsburgh "[\"kddcup\", $POKER]" '["f32", "f16x2"]' 2 5
      for c in rp_engine rp_pittsburgh; do
        stamp "run_experiment $c"
        timeout 400 "$RUN" "$DIR/$c.json" -o "$DIR" -q >"$DIR/$c.log" 2>&1 || { status=1; stamp "$c FAILED"; tail -5 "$DIR/$c.log" >&2; }
      done
      python3 - "$DIR" "$ROOT/results" <<'PY'
import glob, json, os, sys
d, results = sys.argv[1], sys.argv[2]
def runs(path):
    try: return json.load(open(path)).get("runs", [])
    except Exception as e: print(f"{path}: {e}"); return []
def name(r):
    ds = r.get("dataset"); return ds.get("name") if isinstance(ds, dict) else ds
print("\nGPops/s of the fused kernels, population 100 (kernel time on the device clock)")
print(f"{'family':11} {'dataset':11} {'layout':7} {'rpt req':>7} {'rpt':>4} {'block':>5} {'tiles':>6} {'groups':>6} {'grid_x':>6} {'smem':>6} {'GPops/s':>10}  status")
for r in runs(os.path.join(d, "rp_engine.json")):
    m = r.get("metrics") or {}; e = m.get("engine") or {}; p = r.get("params", {})
    print(f"{'engine':11} {name(r):11} {p.get('features','?'):7} {p.get('rows_per_thread','?'):>7} {e.get('rows_per_thread','-'):>4} "
          f"{e.get('block','-'):>5} {e.get('tiles','-'):>6} {e.get('groups','-'):>6} {e.get('grid_x','-'):>6} {e.get('shared_bytes','-'):>6} "
          f"{m.get('gpops_per_s_kernel', 0):10.3e}  {r.get('status')} {e.get('features','')}")
for r in runs(os.path.join(d, "rp_pittsburgh.json")):
    m = r.get("metrics") or {}; b = m.get("backend_info") or {}; f = b.get("fast_launch") or {}; p = r.get("params", {})
    print(f"{'pittsburgh':11} {name(r):11} {p.get('features','?'):7} {'policy':>7} {f.get('rows_per_thread','-'):>4} "
          f"{f.get('block','-'):>5} {f.get('tiles','-'):>6} {f.get('groups','-'):>6} {'-':>6} {f.get('shared_bytes','-'):>6} "
          f"{m.get('gpops_per_s', 0):10.3e}  {r.get('status')} {b.get('features','')}")
for path in sorted(glob.glob(os.path.join(results, "*", "pitt_layouts.json"))):
    for r in runs(path):
        m = r.get("metrics") or {}; p = r.get("params", {}); b = m.get("backend_info") or {}
        if name(r) in ("kddcup", "poker_full") and p.get("devices", 1) == 1:
            lay = b.get("features", "?")
            req = p.get("features", "auto")
            print(f"{'pitt before':11} {name(r):11} {req + ' -> ' + lay + (' exact' if lay == 'f16x2' else ''):20} {'':>11} "
                  f"{m.get('gpops_per_s', 0):10.3e}  committed {os.path.relpath(path, results)}")
PY
      ;;
    ncu)
      if ! command -v ncu >/dev/null; then stamp "ncu not found"; status=1; continue; fi
      for fam in ${RP_FAMILIES:-engine pittsburgh}; do
        for ds in ${RP_DATASETS:-kddcup poker}; do
          for lay in f32 f16x2; do
            cfg="ncu_${fam}_${ds}_${lay}"
            if [ "$fam" = engine ]; then engine_config "$cfg" "[$(dataset_json "$ds")]" "\"$lay\"" 0 0 1
            else pitt_config "$cfg" "[$(dataset_json "$ds")]" "\"$lay\"" 0 1; fi
            stamp "ncu $cfg"
            timeout 300 ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy \
              --section WarpStateStats --section InstructionStats --metrics "$STALLS" -k regex:fused_kernel -c 1 \
              "$RUN" "$DIR/$cfg.json" -o "$DIR/ncu_results" -q >"$DIR/$cfg.txt" 2>&1 ||
              { status=1; stamp "$cfg FAILED (see $cfg.txt)"; tail -5 "$DIR/$cfg.txt" >&2; continue; }
            python3 "$ROOT/scripts/device/ncu_summary.py" "$DIR/$cfg.txt" "$DIR/ncu_results/$cfg.json" fused_kernel
          done
        done
      done ;;
    *) echo "rules_profile.sh: unknown stage '$s' (build timing ncu)" >&2; status=2 ;;
  esac
done
stamp "status $status"
exit $status
