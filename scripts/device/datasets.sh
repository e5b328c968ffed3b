#!/usr/bin/env bash
# Datasets on the GPU machine (no GPU code: this checks the data the GPU runs will use).
#   BUILD    built tree (default: build)          OUT_DIR  output folder (default: results-device/datasets)
# Runs the dataset tests (real files when GPUDM_DATA_DIR or ../shared/datasets exists), writes the
# `run_experiment --datasets` report, and times loading/generating the large inputs of the GPU
# experiments (kddcup, poker_full, covertype, rec, susy, higgs, kdd_full, armchair10m) on this
# host. About a minute on 16 cores.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT_DIR="${OUT_DIR:-$ROOT/results-device/datasets}"
mkdir -p "$OUT_DIR"
if [ -z "${GPUDM_DATA_DIR:-}" ]; then
  for d in "$ROOT/../shared/datasets" "$ROOT/shared/datasets"; do
    if [ -f "$d/STATS.tsv" ]; then export GPUDM_DATA_DIR="$(cd "$d" && pwd)"; break; fi
  done
fi
echo "GPUDM_DATA_DIR=${GPUDM_DATA_DIR:-<unset>}" | tee "$OUT_DIR/env.txt"

status=0
for t in test_datasets test_datasets_files; do
  echo "== $t"
  if ! "$BUILD/tests/datasets/$t" --gtest_output="xml:$OUT_DIR/$t.xml" > "$OUT_DIR/$t.log" 2>&1; then
    status=1
  fi
  tail -4 "$OUT_DIR/$t.log"
done

RUN="$BUILD/experiments/run_experiment"
if [ -x "$RUN" ]; then
  echo "== run_experiment --datasets"
  if ! "$RUN" --datasets > "$OUT_DIR/catalog.md" 2> "$OUT_DIR/catalog.err"; then
    status=1
    cat "$OUT_DIR/catalog.err"
  fi
  tail -3 "$OUT_DIR/catalog.md"
fi

TIMER="$BUILD/datasets/gpudm_dataset_timing"
if [ -x "$TIMER" ]; then
  echo "== load/generate timing"
  "$TIMER" kddcup poker_full covertype rec susy higgs kdd_full armchair10m rt_vfml rt_moa 2>&1 | tee "$OUT_DIR/timing.txt" || status=1
fi
exit $status
