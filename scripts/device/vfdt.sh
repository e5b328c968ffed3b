#!/usr/bin/env bash
# GPU run of the vfdt family (streaming Hoeffding trees / forests, Marron et al. 2014).
#   BUILD     built tree (default: build)        OUT_DIR  output folder (default: results-device/vfdt)
#   VFDT_MODE tests | smoke | gpu | cpu | all (default: all)
#     tests: GPU equivalence (CUDA default + faithful paths vs sequential, bit-identical trees)
#     gpu:   GPU-heavy configs (Table 4, Table 3, Table 1, Fig. 11) — about 2-3 minutes on an H100
#     cpu:   configs dominated by the exact sequential B=1 forest (Table 2, Figs 8-10) — several
#            minutes on 16 cores; run as a separate command if the 10-minute limit is tight
# Results go to OUT_DIR/results (tables .md/.csv + JSON); the runner's own results/<gpu-tag>/ too.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT_DIR="${OUT_DIR:-$ROOT/results-device/vfdt}"
MODE="${VFDT_MODE:-all}"
mkdir -p "$OUT_DIR"
if [ -z "${GPUDM_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/datasets" ]; then
  export GPUDM_DATA_DIR="$(cd "$ROOT/../shared/datasets" && pwd)"
fi
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-16}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$OUT_DIR/gpu.csv" 2>&1 || true

status=0
RUN="$BUILD/experiments/run_experiment"
run_cfg() {  # run_cfg <config> <timeout-seconds>
  local cfg="$1" limit="$2" name
  name="$(basename "$cfg" .json)"
  echo "== $name (limit ${limit}s)"
  if ! timeout "$limit" "$RUN" "$ROOT/configs/$cfg" -o "$OUT_DIR/results" 2>&1 | tee "$OUT_DIR/$name.log" | tail -40; then
    echo "!! $name failed or timed out" | tee -a "$OUT_DIR/status.txt"
    status=1
  fi
}

if [ "$MODE" = tests ] || [ "$MODE" = all ]; then
  for t in test_vfdt_gpu test_vfdt_equivalence test_vfdt_math test_vfdt_tree; do
    echo "== $t"
    if ! "$BUILD/tests/vfdt/$t" --gtest_output="xml:$OUT_DIR/$t.xml" 2>&1 | tee "$OUT_DIR/$t.log" | tail -15; then
      status=1
    fi
  done
fi
if [ "$MODE" = smoke ]; then
  for c in vfdt_table1 vfdt_table2 vfdt_table3 vfdt_table4 vfdt_fig8 vfdt_fig9 vfdt_fig10 vfdt_fig11; do
    "$RUN" "$ROOT/configs/$c.json" --smoke -o "$OUT_DIR/smoke" 2>&1 | tee "$OUT_DIR/smoke_$c.log" | tail -20 || status=1
  done
fi
if [ "$MODE" = gpu ] || [ "$MODE" = all ]; then
  run_cfg vfdt_table4.json 300
  run_cfg vfdt_table3.json 240
  run_cfg vfdt_table1.json 240
  run_cfg vfdt_fig11.json 240
fi
if [ "$MODE" = cpu ] || [ "$MODE" = all ]; then
  run_cfg vfdt_table2.json 540
  run_cfg vfdt_fig10.json 200
  run_cfg vfdt_fig8.json 200
  run_cfg vfdt_fig9.json 400
fi
exit $status
