#!/usr/bin/env bash
# GPU-machine run of the gmt family (CPU backends only: the CUDA GMT backend is the next issue).
# Uses the machine's 16 CPU cores for the sequential and OpenMP backends.
#   BUILD      built tree (default: build)        OUT_DIR  output folder (default: results-device/gmt)
#   GMT_STAGES comma-separated stages (default: tests,speedup,table4,table3 ~3-4 min in all):
#     tests    gmt_unit_tests + gmt_equivalence_tests (sequential == OpenMP, bit for bit)   ~20 s
#     speedup  configs/gmt_speedup.json: Armchair 1M, 5 iterations, sequential vs OpenMP
#              1/4/16 threads (target >= 10x at 16 threads) + six-procedure breakdown     ~1 min
#     table4   configs/gmt_table4.json: Armchair 10K..1M, 10 iterations -> 10,000 (est.)   ~1 min
#     table3   configs/gmt_table3.json: the real-life datasets, same extrapolation          ~1 min
#     quality  configs/gmt_armchair_quality.json: Armchair 10K, the full default budget
#              (10,000 iterations, OpenMP 16), 3 seeds: leaves and RMSE vs noise            ~3-5 min
# Results (tables .md/.csv + JSON) go to OUT_DIR/results; copy them to results/<cpu-tag>/.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT_DIR="${OUT_DIR:-$ROOT/results-device/gmt}"
STAGES=",${GMT_STAGES:-tests,speedup,table4,table3},"
mkdir -p "$OUT_DIR"
if [ -z "${GPUDM_DATA_DIR:-}" ]; then
  for d in "$ROOT/shared/datasets" "$ROOT/../shared/datasets"; do
    [ -d "$d" ] && export GPUDM_DATA_DIR="$(cd "$d" && pwd)" && break
  done
fi
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-16}"
export OMP_PROC_BIND="${OMP_PROC_BIND:-spread}"
{ lscpu 2>/dev/null | grep -E "Model name|^CPU\(s\)|Thread|Socket|NUMA node\(s\)"; nproc; } > "$OUT_DIR/cpu.txt" 2>&1

status=0
RUN="$BUILD/experiments/run_experiment"
has() { case "$STAGES" in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
run_cfg() {  # run_cfg <config> <timeout-seconds>
  local cfg="$1" limit="$2" name
  name="$(basename "$cfg" .json)"
  echo "== $name (limit ${limit}s) $(date -u +%H:%M:%S)"
  if ! timeout "$limit" "$RUN" "$ROOT/configs/$cfg" -b sequential -b openmp -o "$OUT_DIR/results" > "$OUT_DIR/$name.log" 2>&1; then
    echo "!! $name failed or timed out" | tee -a "$OUT_DIR/status.txt"
    status=1
  fi
  tail -30 "$OUT_DIR/$name.log"
}

if has tests; then
  for t in gmt_unit_tests gmt_equivalence_tests; do
    echo "== $t"
    if ! timeout 120 "$BUILD/tests/gmt/$t" --gtest_output="xml:$OUT_DIR/$t.xml" > "$OUT_DIR/$t.log" 2>&1; then
      echo "!! $t failed" | tee -a "$OUT_DIR/status.txt"
      status=1
    fi
    tail -4 "$OUT_DIR/$t.log"
  done
fi
has speedup && run_cfg gmt_speedup.json 240
has table4 && run_cfg gmt_table4.json 150
has table3 && run_cfg gmt_table3.json 150
has quality && run_cfg gmt_armchair_quality.json 420
exit $status
