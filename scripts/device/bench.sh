#!/usr/bin/env bash
# GPU machine: gpudm_bench's family cases (pittsburgh, subtree, gmt, vfdt, gp_rules: small on every backend,
# medium on cuda), 9 repetitions, as a baseline to gate the next GPU run against on the same kind
# of machine:  python3 scripts/perf_gate.py old/bench_families.json new/bench_families.json
# Called by run_all.sh (area "bench"); BUILD and OUT_DIR as the other area scripts.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build-device}"
OUT_DIR="${OUT_DIR:-$ROOT/logs/bench}"
mkdir -p "$OUT_DIR"
BENCH="$BUILD/experiments/bench/gpudm_bench"
[ -x "$BENCH" ] || { echo "bench: $BENCH not built"; exit 1; }
# One iteration per repetition (min_time 0): each iteration is a whole Family::run_case (data
# prepared, one warm-up, one timed repetition), so Google Benchmark's default 0.5 s would cost minutes.
timeout 220 "$BENCH" --benchmark_filter='^(pittsburgh|subtree|gmt|vfdt|gp_rules)/' --benchmark_repetitions=9 \
  --benchmark_min_time=0 --benchmark_display_aggregates_only=true \
  --benchmark_out="$OUT_DIR/bench_families.json" --benchmark_out_format=json >"$OUT_DIR/bench.txt" 2>&1
rc=$?
grep -E "_median|ERROR" "$OUT_DIR/bench.txt" | head -40
exit $rc
