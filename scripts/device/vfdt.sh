#!/usr/bin/env bash
# GPU run of the vfdt family (streaming Hoeffding trees / forests, Marron et al. 2014).
#   BUILD      built tree (default: build)      OUT_DIR  output folder (default: results-device/vfdt)
#   VFDT_STAGES comma-separated stages (default: tests,speed — fits run_all.sh's 240 s per area):
#     tests     GPU equivalence: CUDA default + faithful paths and both ADWIN kernels vs sequential
#               (bit-identical trees and predictions), plus the unit tests       ~30-60 s
#     speed     Table 4 (forest of 100) and Table 3 (single tree): seconds, instances/s,
#               tree-instance updates/s, ADWIN share                             ~2-3 min
#     accuracy  Table 1 and Table 2 (exact sequential B=1 forest: the slow part) and the learning
#               curves of Figs 8-10                                              ~6-9 min
#     scaling   Fig. 11 (forest time vs REC instances, OpenMP(16) vs GPU)       ~1-2 min
#     leaf      majority-class vs naive Bayes leaves, tree and forest (configs/vfdt_leaf_prediction.json) ~2 min
#     order     batch orders "deferred" vs "stream" against the exact B = 1 run, accuracy and GPU time
#               (configs/vfdt_batch_order.json)                                  ~3 min
#     smoke     every config with --smoke (seconds)
# Results (tables .md/.csv + JSON) go to OUT_DIR/results; copy them to results/<gpu-tag>/.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT_DIR="${OUT_DIR:-$ROOT/results-device/vfdt}"
STAGES=",${VFDT_STAGES:-tests,speed},"
mkdir -p "$OUT_DIR"
if [ -z "${GPUDM_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/datasets" ]; then
  export GPUDM_DATA_DIR="$(cd "$ROOT/../shared/datasets" && pwd)"
fi
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-16}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$OUT_DIR/gpu.csv" 2>&1 || true

status=0
RUN="$BUILD/experiments/run_experiment"
has() { case "$STAGES" in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
run_cfg() {  # run_cfg <config> <timeout-seconds> [extra args]
  local cfg="$1" limit="$2" name
  shift 2
  name="$(basename "$cfg" .json)"
  echo "== $name (limit ${limit}s) $(date -u +%H:%M:%S)"
  if ! timeout "$limit" "$RUN" "$ROOT/configs/$cfg" -o "$OUT_DIR/results" "$@" > "$OUT_DIR/$name.log" 2>&1; then
    echo "!! $name failed or timed out" | tee -a "$OUT_DIR/status.txt"
    status=1
  fi
  tail -25 "$OUT_DIR/$name.log"
}

if has tests; then
  # test_vfdt_equivalence: every backend (the .../cuda instances included) vs the sequential
  # backend and the independent reference
  for t in test_vfdt_equivalence test_vfdt_math test_vfdt_tree; do
    echo "== $t"
    if ! timeout 240 "$BUILD/tests/vfdt/$t" --gtest_output="xml:$OUT_DIR/$t.xml" > "$OUT_DIR/$t.log" 2>&1; then
      status=1
    fi
    tail -8 "$OUT_DIR/$t.log"
  done
fi
if has smoke; then
  for c in vfdt_table1 vfdt_table2 vfdt_table3 vfdt_table4 vfdt_fig8 vfdt_fig9 vfdt_fig10 vfdt_fig11; do
    "$RUN" "$ROOT/configs/$c.json" --smoke -o "$OUT_DIR/smoke" > "$OUT_DIR/smoke_$c.log" 2>&1 || status=1
    tail -12 "$OUT_DIR/smoke_$c.log"
  done
fi
if has speed; then
  run_cfg vfdt_table4.json 280
  run_cfg vfdt_table3.json 150
fi
if has accuracy; then
  run_cfg vfdt_table1.json 200
  run_cfg vfdt_table2.json 560
  run_cfg vfdt_fig10.json 200
  run_cfg vfdt_fig8.json 200
  run_cfg vfdt_fig9.json 400
fi
if has leaf; then
  run_cfg vfdt_leaf_prediction.json 300
fi
if has order; then
  run_cfg vfdt_batch_order.json 400
fi
if has scaling; then
  run_cfg vfdt_fig11.json 200
fi
if [ -x "$(command -v python3)" ] && [ -f "$ROOT/plots/vfdt_figures.py" ] && [ -d "$OUT_DIR/results" ]; then
  python3 "$ROOT/plots/vfdt_figures.py" "$OUT_DIR/results" -o "$OUT_DIR/plots" > "$OUT_DIR/plots.log" 2>&1 || true
fi
exit $status
