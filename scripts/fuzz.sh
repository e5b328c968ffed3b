#!/usr/bin/env bash
# Builds the libFuzzer targets (Debian's clang; -fsanitize=fuzzer,address,undefined; CUDA and
# OpenMP off) in build-fuzz and runs each for SECONDS on its committed seed corpus
# (tests/fuzz/corpus/<target>/), one after the other. New inputs go to a work corpus in the build
# folder, never into the source tree; a crash input is kept in build-fuzz/crashes/<target>/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     default 20 s each, every target
#   scripts/fuzz.sh --build-only
#   scripts/fuzz.sh --run-only [SECONDS] [TARGET...]   no configure or build (a long campaign
#                                              beside other builds: build first, under their lock)
#
# Prints per target: wall seconds, CPU seconds, executions, coverage (cov: edges, ft: features) and
# the size of the work corpus. Environment: GPUDM_FUZZ_BUILD_DIR (default build-fuzz), GPUDM_JOBS (build jobs),
# GPUDM_FUZZ_OPT (optimisation flags of a new build folder, default -O1 -gline-tables-only),
# GPUDM_FUZZ_SUMMARY (file the per-target figures are appended to, TSV), GPUDM_FUZZ_ARGS (extra
# libFuzzer flags). Exit status 1 when a target found a crash, a leak or a timeout.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GPUDM_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
TARGETS_ALL=(fuzz_config fuzz_dataset_csv fuzz_dataset_tsv fuzz_dataset_arff fuzz_dataset_keel fuzz_dataset_uci
             fuzz_gzip fuzz_population fuzz_gmt_model fuzz_gmt_batch)

build_only=0
run_only=0
seconds=20
if [ "${1:-}" = "--build-only" ]; then build_only=1; shift; fi
if [ "${1:-}" = "--run-only" ]; then run_only=1; shift; fi
if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then seconds="$1"; shift; fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${TARGETS_ALL[@]}")

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (scripts/install-deps.sh installs clang)" >&2
  exit 1
fi
if [ $run_only -eq 0 ]; then
  # -O1 -gline-tables-only: what libFuzzer's documentation suggests; line numbers in the reports.
  # GPUDM_FUZZ_OPT overrides it (CI: -O0, half the build time; a few seconds a target need no speed).
  CC=clang CXX=clang++ "$ROOT/scripts/configure-once.sh" "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="${GPUDM_FUZZ_OPT:--O1 -gline-tables-only}" -DGPUDM_FUZZ=ON \
    -DGPUDM_ENABLE_CUDA=OFF -DGPUDM_ENABLE_OPENMP=OFF -DGPUDM_BUILD_TESTS=OFF -DGPUDM_BUILD_BENCH=OFF
  cmake --build "$BUILD" -j "${GPUDM_JOBS:-$(nproc)}" --target "${targets[@]}"
fi
[ $build_only -eq 1 ] && exit 0

status=0
# CPU seconds of the finished children into CPU_NOW: bash's `times` (second line "user sys"),
# written to a file because in a pipeline or $(...) it would report a subshell's zeros.
TIMES="$BUILD/times.txt"
cpu_now() {
  times >"$TIMES"
  CPU_NOW=$(tail -1 "$TIMES" | sed -E 's/([0-9]+)m([0-9.]+)s/\1 \2/g' | awk '{printf "%.0f", $1 * 60 + $2 + $3 * 60 + $4}')
}
printf "%-20s %8s %8s %12s %8s %8s %8s  %s\n" target seconds cpu_s executions cov ft corpus result
for t in "${targets[@]}"; do
  if [ ! -x "$BUILD/tests/fuzz/$t" ]; then
    echo "fuzz.sh: $BUILD/tests/fuzz/$t not built (run without --run-only, or scripts/fuzz.sh --build-only $t)" >&2
    exit 1
  fi
  seeds="$ROOT/tests/fuzz/corpus/$t"
  work="$BUILD/corpus/$t"
  crashes="$BUILD/crashes/$t"
  mkdir -p "$work" "$crashes"
  log="$BUILD/$t.log"
  # -max_len: configs and model files need more than libFuzzer's default 4 KB to get deep.
  cpu_now
  cpu0=$CPU_NOW
  set +e
  "$BUILD/tests/fuzz/$t" "$work" "$seeds" -max_total_time="$seconds" -max_len=16384 -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$crashes/" ${GPUDM_FUZZ_ARGS:-} >"$log" 2>&1
  rc=$?
  set -e
  cpu_now
  cpu=$(( CPU_NOW - cpu0 ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || true)
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || true)
  corpus=$(ls "$work" | wc -l)
  result=ok
  if [ $rc -ne 0 ]; then
    result="FAILED (exit $rc; $log, inputs in $crashes)"
    status=1
    grep -E 'ERROR: |SUMMARY: ' "$log" | head -3 >&2 || true
  fi
  printf "%-20s %8s %8s %12s %8s %8s %8s  %s\n" "$t" "$seconds" "$cpu" "${execs:-0}" "${cov:--}" "${ft:--}" "$corpus" "$result"
  if [ -n "${GPUDM_FUZZ_SUMMARY:-}" ]; then
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$t" "$seconds" "$cpu" "${execs:-0}" "${cov:--}" "${ft:--}" "$corpus" "$result" \
      >>"$GPUDM_FUZZ_SUMMARY"
  fi
done
exit $status
