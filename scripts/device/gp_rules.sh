#!/usr/bin/env bash
# GP classification rules on the GPU machine: the rule engine's and the gp_rules
# family's GPU tests, then the paper's experiments, in stages so each device call stays under the
# 10-minute limit. Results go to results/<gpu-tag>/ in the tree (run_experiment's default), logs to
# logs/gp_rules/, and both are packed into $OUT/results.tar.gz (as scripts/device/run_all.sh).
#   OUT=$OUT scripts/device/gp_rules.sh [STAGE...]      (default: tests)
# Stages (estimated on one H100/H200 with 16 cores; Tables 3-5's host baselines: full runs up to
# 1.2e11 GPops, above that the replay of the CUDA run's recorded populations, see the
# configs' notes):
#   build     run_all.sh build of the targets below (also done first by any stage when missing)
#   tests     test_rule_engine, test_gp_rules_runs (their /cuda instances: every path, layout,
#             rows per thread), test_gp_rules                                          ~1 min
#   engine    configs/gp_engine.json: engine GPops/s, CUDA configurations, OpenMP 16 vs 1  ~1 min
#   table3    configs/gp_table3.json (Falco)                                           ~4-6 min
#   table4    configs/gp_table4.json (Bojarczuk)                                       ~1.5 min
#   table5    configs/gp_table5.json (Tan)                                             ~3-5 min
#   table1    configs/gp_table1.json (phase breakdown, sequential + CUDA fast/faithful) ~3 min
#   fig14     configs/gp_fig14.json --resume (nothing runs again after table3-5) + the plot
#   sanitize  compute-sanitizer memcheck and racecheck over the GPU tests of test_rule_engine,
#             test_gp_rules_runs and test_gp_rules (scripts/device/sanitize.sh; summaries in
#             $OUT/sanitize/summary.md; GP_SANITIZE_TIMEOUT s per binary and tool, default 150)
#   accuracy  configs/gp_accuracy.json (10-fold CV, CUDA; results/cpu/sklearn_tree_cv.json
#             beside it)                                                               ~4 min
# Suggested calls: "build tests engine", "table3 table4", "table5", "table1 fig14", "accuracy".
# GP_RESUME=1 adds --resume to every experiment (a cut stage continues where it stopped).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. "$ROOT/scripts/device/common.sh"  # BUILD, GPUDM_DATA_DIR
OUT="${OUT:-$ROOT/out}"
LOGS="$ROOT/logs/gp_rules"
mkdir -p "$OUT" "$LOGS"
T0=$(date +%s)
stamp() { echo "[gp_rules $(( $(date +%s) - T0 ))s] $*" >&2; }
status=0
STAGES=("${@:-tests}")
TARGETS="run_experiment test_rule_engine test_gp_rules test_gp_rules_runs gp_rules_export"

pack() {
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv >"$LOGS/gpu.csv" 2>&1 || true
  # results/ with the journals of cut runs: put them back in the tree (results/<gpu>/) before the
  # next call, whose copy of the tree replaces results/ on the machine
  tar -czf "$OUT/results.tar.gz" results logs 2>/dev/null || tar -czf "$OUT/results.tar.gz" logs
  stamp "packed $OUT/results.tar.gz"
}
trap pack EXIT

build() {
  stamp "build: $TARGETS"
  GPUDM_BUILD_TARGETS="$TARGETS" BUILD="$BUILD" OUT="$OUT" bash "$ROOT/scripts/device/run_all.sh" build >"$LOGS/build.log" 2>&1 ||
    { status=1; tail -20 "$LOGS/build.log" >&2; }
}
needs_build=0
for t in $TARGETS; do [ -e "$BUILD/$(case $t in test_rule_engine) echo tests/rules/$t;; test_gp_rules*) echo tests/gp_rules/$t;;
  run_experiment) echo experiments/$t;; *) echo tools/$t;; esac)" ] || needs_build=1; done
for s in "${STAGES[@]}"; do [ "$s" = build ] && needs_build=1; done
[ $needs_build = 1 ] && build

RUN="$BUILD/experiments/run_experiment"
experiment() {  # experiment CONFIG [args]
  local cfg="$1"; shift
  local extra=()
  [ "${GP_RESUME:-0}" = 1 ] && extra+=(--resume)
  local limit
  limit="$(call_timeout "${GP_STAGE_TIMEOUT:-560}")"
  if [ "$limit" = 0 ]; then status=1; stamp "$cfg skipped: the device call has no time left (run the stage in the next call)"; return; fi
  stamp "run_experiment configs/$cfg $* ${extra[*]} (limit ${limit}s)"
  timeout "$limit" "$RUN" "configs/$cfg" "$@" "${extra[@]}" >"$LOGS/${cfg%.json}.log" 2>&1 ||
    { status=1; stamp "$cfg FAILED or cut (logs/gp_rules/${cfg%.json}.log; GP_RESUME=1 continues from its journal, which the pack carries back)"; }
  tail -4 "$LOGS/${cfg%.json}.log" >&2
  pack  # now, not only at exit: the device tool kills a call at its limit, traps and all
}

for s in "${STAGES[@]}"; do
  case "$s" in
    build) ;;
    tests)
      for t in rules/test_rule_engine gp_rules/test_gp_rules_runs gp_rules/test_gp_rules; do
        n="$(basename "$t")"
        stamp "$n"
        timeout "$(call_timeout 300)" "$BUILD/tests/$t" --gtest_output="json:$LOGS/$n.json" >"$LOGS/$n.log" 2>&1 ||
          { status=1; stamp "$n FAILED"; grep -E "FAILED|Failure" "$LOGS/$n.log" | head -20 >&2; }
        tail -3 "$LOGS/$n.log" >&2
      done ;;
    sanitize)
      stamp "sanitize: memcheck, racecheck (rule engine and gp_rules GPU tests)"
      GPUDM_SANITIZE_BINARIES='^(test_rule_engine|test_gp_rules_runs|test_gp_rules)$' GPUDM_SANITIZE_TIMEOUT="${GP_SANITIZE_TIMEOUT:-150}" \
        BUILD="$BUILD" OUT_DIR="$OUT" bash "$ROOT/scripts/device/sanitize.sh" >"$LOGS/sanitize.log" 2>&1 ||
        { status=1; stamp "sanitize reported errors or timed out ($OUT/sanitize/summary.md)"; }
      tail -12 "$LOGS/sanitize.log" >&2 ;;
    engine) experiment gp_engine.json ;;
    table1|table3|table4|table5) experiment "gp_$s.json" ;;
    accuracy) experiment gp_accuracy.json -b cuda ;;
    fig14)
      if [ "${GP_RESUME:-0}" = 1 ]; then experiment gp_fig14.json; else experiment gp_fig14.json --resume; fi
      tag_dir="$(ls -td results/*/gp_table3.json 2>/dev/null | head -1 | xargs -r dirname)"
      if [ -n "$tag_dir" ]; then
        python3 plots/gp_figures.py fig14 "$tag_dir/gp_table3.json" "$tag_dir/gp_table4.json" "$tag_dir/gp_table5.json" \
          --out "$tag_dir" >"$LOGS/fig14_plot.log" 2>&1 ||
          python3 plots/gp_figures.py fig14 "$tag_dir"/gp_table{3,4,5}.json --data >"$tag_dir/gp_fig14_data.json" 2>>"$LOGS/fig14_plot.log" ||
          stamp "fig14 plot failed (logs/gp_rules/fig14_plot.log)"
      fi ;;
    *) echo "gp_rules.sh: unknown stage '$s' (build tests sanitize engine table1 table3 table4 table5 fig14 accuracy)" >&2; status=2 ;;
  esac
done
stamp "status $status"
exit $status
