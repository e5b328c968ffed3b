#!/usr/bin/env bash
# GPU run of the subtree family (parallel subtree interpreter, GPops/s grid).
#   BUILD    built tree (default: build)          OUT_DIR  output folder (default: results-device/subtree)
#   SUBTREE_MODE  tests | smoke | grid | all (default: all = tests + grid)
# Run from the repository root on the GPU machine; the grid takes a few minutes on an H100
# (HIGGS 11M x 28 and REC/SUSY/KDD surrogates are generated on the host first).
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
  # Results land in results/<gpu-tag>/ by default (the runner picks the tag); copy them to OUT_DIR too.
  "$RUN" "$ROOT/configs/subtree_grid.json" -o "$OUT_DIR/results" 2>&1 | tee "$OUT_DIR/grid.log" || status=1
fi
exit $status
