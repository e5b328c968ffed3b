#!/usr/bin/env bash
# Pittsburgh rule-set evaluation on the GPU machine: GPU equivalence tests, then the paper's
# tables. Usage: BUILD=build OUT_DIR=out scripts/device/pittsburgh.sh [quick|full]
#   quick (default): tests + Table 3/4 on the full grid (3 reps) + Fig. 6 + Table 5 (power)
#   full:            also Fig. 5 and the GA learner
# Budget on an H100 with 16 cores: tests ~20 s, table3 ~2 min, table4 ~2 min, table5 ~1 min, fig6 ~30 s.
# On a one-GPU machine the 2-GPU runs are recorded as skipped; run fig6 on the two-GPU machine.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT_DIR="${OUT_DIR:-$ROOT/out}"
MODE="${1:-quick}"
mkdir -p "$OUT_DIR/pittsburgh"
if [ -z "${GPUDM_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/datasets" ]; then
  export GPUDM_DATA_DIR="$(cd "$ROOT/../shared/datasets" && pwd)"
fi
status=0
log() { echo "[pittsburgh] $*" >&2; }

log "GPU tests"
"$BUILD/tests/pittsburgh/test_pittsburgh_gpu" --gtest_output="json:$OUT_DIR/pittsburgh/test_pittsburgh_gpu.json" \
  >"$OUT_DIR/pittsburgh/test_pittsburgh_gpu.log" 2>&1 || { status=1; log "test_pittsburgh_gpu FAILED"; }
tail -3 "$OUT_DIR/pittsburgh/test_pittsburgh_gpu.log" >&2
"$BUILD/tests/pittsburgh/test_pittsburgh" >"$OUT_DIR/pittsburgh/test_pittsburgh.log" 2>&1 || { status=1; log "test_pittsburgh FAILED"; }

BIN="$BUILD/experiments/run_experiment"
run() {  # run CONFIG [extra args]
  local cfg="$1"; shift
  log "run_experiment $cfg $*"
  ( cd "$ROOT" && timeout 540 "$BIN" "configs/$cfg" --out "$OUT_DIR/results" "$@" ) \
    >"$OUT_DIR/pittsburgh/${cfg%.json}.log" 2>&1 || { status=1; log "$cfg FAILED (see ${cfg%.json}.log)"; }
  tail -5 "$OUT_DIR/pittsburgh/${cfg%.json}.log" >&2
}
if [ -x "$BIN" ]; then
  run pitt_table3.json
  run pitt_table4.json
  run pitt_fig6.json
  run pitt_table5.json
  if [ "$MODE" = full ]; then
    run pitt_fig5.json
    run pitt_learn.json
  fi
else
  log "no $BIN: experiments skipped"; status=1
fi
exit $status
