#!/usr/bin/env bash
# cuda/common + ceilings on the GPU machine: the gpu-labelled tests of tests/cuda and
# tests/ceilings, configs/ceilings.json (results/<gpu-tag>/ceilings.{json,md,csv} in the tree),
# its figures, and a 9-repetition benchmark baseline of the small ceilings cases (perf gate input).
# About 2 minutes on an H100 box.   Usage: BUILD=build-device OUT_DIR=out/ceilings scripts/device/ceilings.sh
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-build-device}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT_DIR="${OUT_DIR:-$ROOT/out/ceilings}"
case "$OUT_DIR" in /*) ;; *) OUT_DIR="$ROOT/$OUT_DIR" ;; esac
LOG="$OUT_DIR"
mkdir -p "$LOG"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
status=0

echo "== GPU tests (cuda common, ceilings)"
for t in tests/cuda/test_cuda_common tests/cuda/test_cuda_errors tests/cuda/test_nvml tests/ceilings/test_ceilings_gpu; do
  if [ -x "$BUILD/$t" ]; then
    timeout 300 "$BUILD/$t" --gtest_output="xml:$LOG/$(basename "$t").xml" >"$LOG/$(basename "$t").log" 2>&1 || status=1
    tail -3 "$LOG/$(basename "$t").log"
  else
    echo "missing $BUILD/$t"; status=1
  fi
done
grep -E "copy_bandwidth|fma_rate|popcount|bandwidth|latency" "$LOG/test_ceilings_gpu.log" || true

echo "== configs/ceilings.json"
RUN="$BUILD/experiments/run_experiment"
if [ -x "$RUN" ]; then
  # GPUDM_CEILINGS_ARGS: extra run_experiment arguments (e.g. "--smoke --out /tmp/x" for a dry run).
  (cd "$ROOT" && timeout 300 "$RUN" configs/ceilings.json ${GPUDM_CEILINGS_ARGS:-}) >"$LOG/ceilings.md" 2>"$LOG/ceilings.err" ||
    { status=1; tail -20 "$LOG/ceilings.err"; }
  cat "$LOG/ceilings.md"
  # The runner's last stderr line ends with "-> <results json>".
  J="$(grep -o -- '-> .*\.json' "$LOG/ceilings.err" | tail -1 | cut -c4-)"
  case "$J" in /*) ;; ?*) J="$ROOT/$J" ;; esac
  if [ -n "$J" ]; then
    cp "$J" "$LOG/ceilings.json"
    "$PY" "$ROOT/plots/plot_results.py" "$J" --out "$(dirname "$J")" >"$LOG/plots.log" 2>&1 || echo "plots failed (see plots.log)"
  fi
else
  echo "missing $RUN"; status=1
fi

echo "== gpudm_bench baseline (small ceilings cases, 9 repetitions)"
BENCH="$BUILD/experiments/bench/gpudm_bench"
if [ -x "$BENCH" ]; then
  # min_time 0.05 s: each iteration also prepares its buffers (untimed), so default 0.5 s of
  # measured time would cost minutes of wall time for the sub-millisecond GPU cases.
  timeout 240 "$BENCH" --benchmark_filter='^ceilings/.*/small/' --benchmark_repetitions=9 --benchmark_min_time=0.05 \
    --benchmark_display_aggregates_only=true --benchmark_out="$LOG/bench_ceilings.json" --benchmark_out_format=json \
    >"$LOG/bench.txt" 2>&1 || status=1
  tail -30 "$LOG/bench.txt"
fi
exit $status
