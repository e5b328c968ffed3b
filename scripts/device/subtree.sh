#!/usr/bin/env bash
# GPU run of the subtree family (parallel subtree interpreter, GPops/s grid).
#   BUILD    built tree (default: build)          OUT_DIR  output folder (default: results-device/subtree)
#   SUBTREE_MODE  tests | smoke | grid | profile | all (default: all = tests + grid)
#   profile: what bounds each interpreter on small and large data. One evaluation per run
#     (population 128, warmup 0, 1 repetition) of each interpreter (SP_INTERPRETERS, default
#     "postfix mixed subtree best") x tree size (SP_TREES, default "31 127") x dataset (SP_DATASETS,
#     default "iris covertype"), each under Nsight Compute on its first interpreter launch
#     (SpeedOfLight, Occupancy, WarpStateStats, InstructionStats, LaunchStats and the stall
#     metrics), summarised by ncu_summary.py into OUT_DIR/subtree_profile.txt (~16 runs, ~5 min).
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
if [ "$MODE" = profile ]; then
  . "$ROOT/scripts/device/common.sh"  # ncu_stall_metrics
  P="$OUT_DIR/profile"
  mkdir -p "$P"
  # provenance first: the page is a results file of its own (results/<gpu>/subtree_profile.txt)
  { echo "# What bounds each GPU interpreter: Nsight Compute on one population evaluation per case"
    echo "# gpudm ${GPUDM_GIT_SHA:-unknown}; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1);" \
         "$(date -u +%Y-%m-%dT%H:%M:%SZ); SUBTREE_MODE=profile scripts/device/subtree.sh"
    echo "# datasets: ${SP_DATASETS:-iris covertype} (covertype: the generated stand-in of its shape); population 128;" \
         "full trees of ${SP_TREES:-31 127} nodes; each interpreter's first launch"
  } >"$OUT_DIR/subtree_profile.txt"
  for ds in ${SP_DATASETS:-iris covertype}; do
    for tree in ${SP_TREES:-31 127}; do
      for interp in ${SP_INTERPRETERS:-postfix mixed subtree best}; do
        cfg="ncu_${ds}_${tree}_${interp}"
        cat >"$P/$cfg.json" <<JSON
{"experiment": "$cfg", "family": "subtree", "datasets": ["$ds"],
 "params": {"population": 128, "tree_size": $tree, "validate_rows": 4096},
 "cases": [{"backend": "cuda", "params": {"interpreter": "$interp"}}],
 "seeds": [1], "warmup": 0, "repetitions": 1}
JSON
        echo "== ncu $cfg"
        if timeout 300 ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy \
             --section WarpStateStats --section InstructionStats --metrics "$(ncu_stall_metrics)" \
             -k "regex:${interp}_kernel" -c 1 "$RUN" "$P/$cfg.json" -o "$P/results" -q >"$P/$cfg.txt" 2>&1; then
          python3 "$ROOT/scripts/device/ncu_summary.py" "$P/$cfg.txt" "$P/results/$cfg.json" "${interp}_kernel" \
            --label "$ds, $tree nodes, population 128, $interp" | tee -a "$OUT_DIR/subtree_profile.txt"
        else
          status=1; echo "!! $cfg failed (see $P/$cfg.txt)"; tail -5 "$P/$cfg.txt"
        fi
      done
    done
  done
fi
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
