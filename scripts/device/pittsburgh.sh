#!/usr/bin/env bash
# Pittsburgh rule-set evaluation on the GPU machine: GPU equivalence tests, then the paper's
# tables. Usage: BUILD=build OUT_DIR=out scripts/device/pittsburgh.sh [STEP...]
#   steps: tests table3 table4 table5 fig5 fig6 learn layouts ncu; groups: quick (= tests table3 fig6,
#   the default, ~4 min), rest (= table4 table5), extra (= fig5 learn).
# Estimated on an H100 host with 16 cores: tests ~30 s, table3 ~2.5 min, table4 ~2.5 min,
# table5 ~1 min, fig6 ~30 s, fig5 ~2 min, learn ~3 min, layouts (f32 vs f16x2, population 100,
# 1 and 2 GPUs) ~30 s, ncu (Nsight Compute metrics of the fused kernel, Poker population 100) ~30 s. Call it once per group so each command
# stays under the 10-minute limit. On a one-GPU machine the 2-GPU runs are recorded as skipped;
# run `fig6` (and table3/table4 for the 2-GPU columns) on the two-GPU machine.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT_DIR="${OUT_DIR:-$ROOT/out}"
case "$OUT_DIR" in /*) ;; *) OUT_DIR="$ROOT/$OUT_DIR" ;; esac
STEPS=()
for a in "${@:-quick}"; do
  case "$a" in
    quick) STEPS+=(tests table3 fig6) ;;
    rest) STEPS+=(table4 table5) ;;
    extra) STEPS+=(fig5 learn) ;;
    all) STEPS+=(tests table3 fig6 table4 table5 fig5 learn) ;;
    tests|table3|table4|table5|fig5|fig6|learn|layouts|ncu) STEPS+=("$a") ;;
    *) echo "pittsburgh.sh: unknown step '$a'" >&2; exit 2 ;;
  esac
done
has() { local s; for s in "${STEPS[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
mkdir -p "$OUT_DIR/pittsburgh"
if [ -z "${GPUDM_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/datasets" ]; then
  export GPUDM_DATA_DIR="$(cd "$ROOT/../shared/datasets" && pwd)"
fi
status=0
log() { echo "[pittsburgh] $*" >&2; }

if has tests; then
  for t in test_pittsburgh_gpu test_pittsburgh test_pittsburgh_equivalence test_pittsburgh_data; do
    log "$t"
    timeout 300 "$BUILD/tests/pittsburgh/$t" --gtest_output="json:$OUT_DIR/pittsburgh/$t.json" \
      >"$OUT_DIR/pittsburgh/$t.log" 2>&1 || { status=1; log "$t FAILED"; }
    tail -3 "$OUT_DIR/pittsburgh/$t.log" >&2
  done
fi

BIN="$BUILD/experiments/run_experiment"
run() {  # run CONFIG [extra args]
  local cfg="$1"; shift
  log "run_experiment $cfg $*"
  # Results go to $OUT_DIR/results/<gpu-tag>/ (tag from the device name), ready to copy into results/.
  ( cd "$ROOT" && GPUDM_RESULTS_DIR="$OUT_DIR/results" timeout 540 "$BIN" "configs/$cfg" "$@" ) \
    >"$OUT_DIR/pittsburgh/${cfg%.json}.log" 2>&1 || { status=1; log "$cfg FAILED (see ${cfg%.json}.log)"; }
  tail -5 "$OUT_DIR/pittsburgh/${cfg%.json}.log" >&2
}
if [ -x "$BIN" ]; then
  for s in layouts table3 fig6 table4 table5 fig5 learn ncu; do
    has "$s" || continue
    case "$s" in
      table*) run "pitt_$s.json" ;;
      fig*) run "pitt_$s.json" ;;
      learn) run pitt_learn.json ;;
      layouts) run pitt_layouts.json ;;
      ncu)
        # One evaluation of Poker (1,025,010 rows), population 100, fast path, each layout.
        for feat in auto f32; do
          cfg="$OUT_DIR/pittsburgh/ncu_$feat.json"
          cat >"$cfg" <<JSON
{"experiment": "ncu_probe_$feat", "family": "pittsburgh", "datasets": [{"name": "poker_full", "options": {"rows": 1025010}}],
 "params": {"mode": "evaluate", "population": 100, "validate_gpops_budget": 0},
 "cases": [{"backend": "cuda", "params": {"path": "fast", "features": "$feat"}}], "seeds": [1], "warmup": 0, "repetitions": 1}
JSON
          log "ncu fused_kernel ($feat)"
          ( cd "$ROOT" && timeout 300 ncu --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
              -k regex:fused_kernel -c 1 "$BIN" "$cfg" -o "$OUT_DIR/pittsburgh/ncu_out" -q ) \
            >"$OUT_DIR/pittsburgh/ncu_fused_$feat.txt" 2>&1 || log "ncu ($feat) failed (see ncu_fused_$feat.txt)"
          grep -E "fused_kernel|duration|inst_executed|issue_active|warps_active" "$OUT_DIR/pittsburgh/ncu_fused_$feat.txt" >&2
        done ;;
    esac
  done
else
  log "no $BIN: experiments skipped"; status=1
fi
exit $status
