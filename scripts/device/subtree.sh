#!/usr/bin/env bash
# GPU run of the subtree family (parallel subtree interpreter, GPops/s grid).
#   BUILD    built tree (default: build)          OUT_DIR  output folder (default: results-device/subtree)
#   SUBTREE_MODE  tests | smoke | grid | all (default: all = tests + grid)
# Run from the repository root on the GPU machine. Expected: tests ~1 min, grid (540 CUDA runs +
# 270 CPU runs, surrogates up to HIGGS 11M x 28 generated on the host) a few minutes on an H100.
# If the 10-minute limit bites, run SUBTREE_MODE=tests and SUBTREE_MODE=grid as two commands;
# SUBTREE_RESUME=1 adds --resume so a cut grid continues where it stopped.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT_DIR="${OUT_DIR:-$ROOT/results-device/subtree}"
MODE="${SUBTREE_MODE:-all}"
mkdir -p "$OUT_DIR"
if [ -z "${GPUDM_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/datasets" ]; then
  export GPUDM_DATA_DIR="$(cd "$ROOT/../shared/datasets" && pwd)"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT_DIR/gpu.csv" 2>&1 || true

status=0
if [ "$MODE" = tests ] || [ "$MODE" = all ]; then
  for t in test_subtree_cuda test_subtree_equivalence test_subtree_unit; do
    echo "== $t"
    if ! "$BUILD/tests/subtree/$t" --gtest_output="xml:$OUT_DIR/$t.xml" 2>&1 | tee "$OUT_DIR/$t.log" | tail -25; then
      status=1
    fi
  done
fi

RUN="$BUILD/experiments/run_experiment"
if [ "$MODE" = smoke ]; then
  "$RUN" "$ROOT/configs/subtree_grid.json" --smoke -o "$OUT_DIR/smoke" 2>&1 | tee "$OUT_DIR/smoke.log" || status=1
fi
if [ "$MODE" = grid ] || [ "$MODE" = all ]; then
  # Results go to OUT_DIR/results (subtree_grid.{json,md,csv}); commit them under results/<gpu-tag>/.
  RESUME=()
  [ "${SUBTREE_RESUME:-0}" = 1 ] && RESUME=(--resume)
  "$RUN" "$ROOT/configs/subtree_grid.json" -o "$OUT_DIR/results" "${RESUME[@]}" 2>&1 | tee "$OUT_DIR/grid.log" || status=1
fi
exit $status
