#!/usr/bin/env bash
# The runner's part of a GPU run: its tests (including the gpu-labelled environment test), the
# --list and --datasets reports, and the smoke composite (every family x every backend, CUDA
# included) whose results land in $OUT_DIR/results/<gpu-tag>/. About a minute on an H100 box.
# Usage: BUILD=build OUT_DIR=out scripts/device/experiments.sh
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT_DIR="${OUT_DIR:-$ROOT/out}"
case "$OUT_DIR" in /*) ;; *) OUT_DIR="$ROOT/$OUT_DIR" ;; esac
LOG="$OUT_DIR/experiments"
mkdir -p "$LOG"
if [ -z "${GPUDM_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/datasets" ]; then
  export GPUDM_DATA_DIR="$(cd "$ROOT/../shared/datasets" && pwd)"
fi
status=0
log() { echo "[experiments] $*" >&2; }
BIN="$BUILD/experiments/run_experiment"

for t in test_experiments_gpu test_experiments test_experiments_cli; do
  exe="$BUILD/tests/experiments/$t"
  if [ -x "$exe" ]; then
    log "$t"
    timeout 300 "$exe" --gtest_output="json:$LOG/$t.json" >"$LOG/$t.log" 2>&1 || { status=1; log "$t FAILED"; }
    tail -3 "$LOG/$t.log" >&2
  else
    log "missing $exe"; status=1
  fi
done

if [ ! -x "$BIN" ]; then
  log "missing $BIN: reports and smoke run skipped"; exit 1
fi
log "run_experiment --list"
"$BIN" --list >"$LOG/list.txt" 2>&1 || { status=1; log "--list FAILED"; }
log "run_experiment --datasets"
timeout 300 "$BIN" --datasets >"$LOG/datasets.md" 2>"$LOG/datasets.err" || { status=1; log "--datasets FAILED"; }
tail -3 "$LOG/datasets.md" >&2

# The smoke composite on the GPU machine: results go to $OUT_DIR/results/<gpu-tag>/ (the tag
# comes from the device name), so they can be copied into results/ of the repository as they are.
log "run_experiment configs/smoke.json"
( cd "$ROOT" && GPUDM_RESULTS_DIR="$OUT_DIR/results" timeout 300 "$BIN" configs/smoke.json ) \
  >"$LOG/smoke.md" 2>"$LOG/smoke.err" || { status=1; log "smoke FAILED (see smoke.err)"; }
tail -5 "$LOG/smoke.err" >&2
exit $status
