#!/usr/bin/env bash
# GPU-machine run of the gmt family (CUDA backend, Tables 3-4, Figs 15-18, Weka study).
# Before the device call, here: scripts/device/stage_deps.sh and
#   scripts/device/cache_datasets.sh configs/gmt_table3.json configs/gmt_table4.json configs/gmt_fig18.json
# then carry [".deps", "datasets/cache"] and set GPUDM_DATA_DIR=$PWD/datasets/cache and GPUDM_GIT_SHA=<the commit, written
# literally into the command: the device copy's git metadata does not name the tree that runs>.
#
#   scripts/device/gmt.sh [STAGES]         STAGES: comma-separated (or GMT_STAGES; default "tests")
#     tests    build, GMT GPU tests (CUDA == sequential, both paths) + the CPU GMT tests,
#              compute-sanitizer memcheck and racecheck on a GPU-test subset       ~3-4 min
#     sanitizer only the compute-sanitizer part of tests (GMT_SANITIZER_TOOLS, default
#              "memcheck racecheck")
#     table4   configs/gmt_table4.json: Armchair 10K-10M (5M/10M from 1,000 iterations),
#              GPU fast measured, faithful / OpenMP 16 / sequential by replay      ~3-5 min
#     table3a  configs/gmt_table3.json, Pol ... Mv (8 sets)                          ~2-4 min
#     table3b  configs/gmt_table3.json, Layout ... Suzy' (7 sets, 3 surrogates)     ~4-6 min
#     table3mv configs/gmt_table3.json, Mv only (its runs removed from the results file beforehand)
#     table3   table3a then table3b (one call only if the GPU fast path meets its targets)
#     figs     configs/gmt_fig18.json: Armchair 100K and 1M x 2-10 attributes      ~3-5 min
#     weka     scripts/peers/weka_study.sh with BACKEND=cuda, 10,000 iterations, no time cap;
#              Weka's outputs reused from results/h200/gmt_weka_study (no Java here)  ~2-3 min
#     leafrule the Weka study's split, GMT on the GPU (10,000 iterations) once per leaf rule of
#              GMT_LEAFRULE_VALUES (default "0 1.0001 2 3": rows_per_param, 0 = a leaf may have as
#              many parameters as rows, 1.0001 = fewer parameters than rows, the GMT papers' rule)
#              into $OUT_DIR/leafrule/rpp_<value> (results/ untouched)                  ~1 min each
#     generalisation  the GPU side of the generalisation study (scripts/peers/gmt_generalisation.sh
#              runs Weka on the same folds and renders it): --cv 10 --cv-only runs of each set of
#              GMT_GEN_SETS (default the Weka study's 10), each seed of GMT_GEN_SEEDS (default "1 2 3"),
#              each tree variant of GMT_GEN_VARIANTS ("name:key=v,key=v ...", default
#              "rule_off:rows_per_param=0 rule:rows_per_param=1"; the clamp is scored both ways in every
#              run), one run at a time (host_threads GMT_GEN_HOST_THREADS, default 0: the backend's own pool;
#              the committed seed-1 runs used 2, 10.6 s a Pol fold against Table 3's 6.2 s at the default). Metrics into $BUILD/generalisation/<variant>/s<seed>/
#              <set>.json, kept while the machine is warm: a run already there is skipped, so a stage
#              cut by the call's limit goes on in the next call; copied to $OUT_DIR/generalisation
#              (results/ untouched)                              ~30-90 s a set, ~8-11 min a variant and seed
#              The sets of GMT_GEN_PART_SETS (default elnino: 10 folds take more than one call) run in
#              parts of GMT_GEN_PART_FOLDS folds (default 2; --cv-folds), <set>.part<a>-<b>.json, merged
#              into <set>.json (gmt_generalisation.py merge) once every part is there.
#     probe    GPU fast path, short inductions (GMT_PROBE_SPECS replaces the list) (--train gmt, 500-2,000 iterations) on Armchair 1M /
#              100K, Pol, Elevators, Cal housing, Year-shaped: ms per iteration by phase, evaluator
#              calls, repairs (gmt_probe_summary.py)                                    ~1-2 min
#     ncusrc   only the source page and full set of the stats kernel (part of ncu), one launch per
#              set of GMT_NCU_SETS (default armchair); the source pages gzipped
#     ab       a backend param on one machine: whole 10,000-iteration GPU runs of each set of GMT_AB_SETS
#              (default "elnino pol") with GMT_AB_PARAM=B (e.g. fast_stats_grid=chunk) and =A (the last
#              value: GMT_AB_PARAM="fast_stats_grid=chunk|tree"), GMT_AB_PAIRS interleaved pairs (default 3: the
#              same code's runs spread 3-6 % on one machine, more than the host changes we measure);
#              the means, each pair's difference and the spread (gmt_probe_summary.py --ab)   ~25 s a pair
#     hostprof whole 10,000-iteration GPU runs (GMT_HOSTPROF_SETS, default "pol elnino") under the
#              in-process sampler (GPUDM_PROFILE_OUT), reported on the machine by
#              scripts/profile_report.py (all samples, those under GmtEA::run, and the source lines of
#              GMT_HOSTPROF_LINES' functions, default "finish_tree GmtEA::mutate propagate_stats_from_keys";
#              a build without line tables reports them as ??:?)                               ~1 min
#     ncu      Nsight Compute on the fast path's kernels (3 launches each of a short Armchair 1M and
#              Pol induction): speed of light, occupancy, warp states          ~1-2 min
#     plots    plots/gmt_figures.py on the results folder (CSV; PNG/SVG with matplotlib)
#     smoke    every GMT config with --smoke (seconds)
#     agree    configs/gmt_table3.json on GMT_AGREE_SETS (default "elevators elnino"), every case, into
#              $OUT_DIR/agree (results/ untouched): the GPU fast path's fitness and leaves against the
#              committed table's (gmt_agree.py; a mismatch fails the stage), every case's time beside the
#              committed one                                                            ~3-4 min
#   Each table stage appends to results/<gpu-tag>/<experiment>.json (--resume), so a stage cut by
#   its time limit continues where it stopped when run again, provided the cut run's journal
#   (results/<tag>/<experiment>.json.journal, in the packed archive) is put back into the tree
#   first: every device call's copy of the tree replaces results/ on the machine;
#   the batch samples the replays read live in .cache/gmt_batches (GMT_FRESH=1 starts a table
#   from scratch: its results file and journal are deleted; the committed version stays in git).
# Env: BUILD (default build-device), GMT_BUILD_TARGETS (what to build), GMT_LIMIT (seconds per config run, default 540), GMT_SANITIZER=0
#      skips compute-sanitizer in the tests stage,
#      OUT (when set: results + logs packed to $OUT/gmt_results.tar.gz), OUT_DIR (logs, default logs/gmt).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
STAGES=",${1:-${GMT_STAGES:-tests}},"
STAGES="${STAGES//,table3,/,table3a,table3b,}"
. "$ROOT/scripts/device/common.sh"  # BUILD, GPUDM_DATA_DIR
OUT_DIR="${OUT_DIR:-$ROOT/logs/gmt}"
LIMIT="${GMT_LIMIT:-540}"
mkdir -p "$OUT_DIR"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-16}"
export OMP_PROC_BIND="${OMP_PROC_BIND:-spread}"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
status=0
has() { case "$STAGES" in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

GPU_NAME="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
TAG="$(results_tag)"
RESULTS="$ROOT/results/$TAG"
{ echo "gpu: $GPU_NAME (tag $TAG)"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1;
  lscpu 2>/dev/null | grep -E "Model name|^CPU\(s\)"; echo "nproc $(nproc); cgroup cpu.max: $(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo n/a)"; } > "$OUT_DIR/machine.txt"

pack() {
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    tar -czf "$OUT/gmt_results.tar.gz" --exclude='*.bin' results logs 2>/dev/null || tar -czf "$OUT/gmt_results.tar.gz" logs
    stamp "packed $OUT/gmt_results.tar.gz ($(du -h "$OUT/gmt_results.tar.gz" | cut -f1))"
  fi
}
trap pack EXIT

# ---- build: only the GMT targets, through run_all.sh's build stage (configure once, .deps)
# GMT_BUILD_TARGETS: fewer targets for a stage that needs only some (leafrule: gmt_learner gmt_study_split).
TARGETS="${GMT_BUILD_TARGETS:-run_experiment gmt_cuda_tests gmt_reference_tests gmt_equivalence_tests gmt_unit_tests gmt_learner gmt_study_split}"
stamp "== build $TARGETS"
BUILD_OUT="$(mktemp -d)"
if ! BUILD="$BUILD" OUT="$BUILD_OUT" GPUDM_BUILD_TARGETS="$TARGETS" bash "$ROOT/scripts/device/run_all.sh" build >"$OUT_DIR/build.log" 2>&1; then
  tail -40 "$OUT_DIR/build.log"
  rm -rf "$BUILD_OUT"
  exit 1
fi
rm -rf "$BUILD_OUT"
[ -d "$ROOT/.deps/usr" ] && export LD_LIBRARY_PATH="$ROOT/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
stamp "build done"
RUN="$BUILD/experiments/run_experiment"
TESTS="$BUILD/tests/gmt"

# ---- tests
if has tests; then
  for t in gmt_cuda_tests gmt_reference_tests gmt_equivalence_tests gmt_unit_tests; do
    stamp "== $t"
    timeout 300 "$TESTS/$t" --gtest_output="xml:$OUT_DIR/$t.xml" >"$OUT_DIR/$t.log" 2>&1 || { status=1; echo "!! $t failed"; }
    grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests? ran|Failure|expected|Which is" "$OUT_DIR/$t.log" | head -40
  done
fi

if has tests || has sanitizer; then
  SAN="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)"
  if [ "${GMT_SANITIZER:-1}" = 0 ]; then
    echo "compute-sanitizer skipped (GMT_SANITIZER=0)"
  elif [ -n "$SAN" ]; then
    # Small shapes only: the sanitizer runs kernels 10-100x slower.
    FILTER="GmtCuda.QuirksEmptyLeavesFewRowsConstantColumnsNaN:GmtCuda.DeepAndBushyTrees:GmtCuda.ModelsWiderThanTheBatchedSolverTakeTheExactSolver:GmtCuda.EmptyBatchAndTooLittleDeviceMemory:GmtCuda.RepairsFoldedIntoTheCallMatchSequential:GmtCuda.NearExactFitsTakeTheirSseFromTheResiduals"
    # racecheck is much slower than memcheck (every shared-memory access is tracked): the tests
    # whose kernels use shared memory on small shapes (the fused pass, both paths' sort tables)
    # (the repairs test, 40 iterations of an EA, does not finish in 4 minutes under racecheck)
    RFILTER="GmtCuda.QuirksEmptyLeavesFewRowsConstantColumnsNaN:GmtCuda.ModelsWiderThanTheBatchedSolverTakeTheExactSolver:GmtCuda.NearExactFitsTakeTheirSseFromTheResiduals"
    for tool in ${GMT_SANITIZER_TOOLS:-memcheck racecheck}; do
      stamp "== compute-sanitizer --tool $tool"
      f="$FILTER"; [ "$tool" = racecheck ] && f="$RFILTER"
      timeout -k 10 240 "$SAN" --tool "$tool" --error-exitcode 9 "$TESTS/gmt_cuda_tests" --gtest_filter="$f" \
        >"$OUT_DIR/sanitizer_$tool.log" 2>&1
      rc=$?
      pkill -f gmt_cuda_tests 2>/dev/null  # a timed-out sanitizer's test process must not run on beside the next stages
      [ $rc -eq 0 ] || status=1
      echo "compute-sanitizer $tool: exit $rc; $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Target application returned" "$OUT_DIR/sanitizer_$tool.log" | tail -2 | tr '\n' ' ')"
    done
  else
    echo "compute-sanitizer not found: memcheck/racecheck not run"
  fi
fi

# A table run: the config (optionally with a subset of its datasets, same experiment id) with
# --resume, under the time limit. Results from an older config version are deleted first (the
# committed version stays in git).
FRESH_DONE=""
run_table() {  # run_table <config> <log name> [first dataset index] [count]
  local cfg="$ROOT/configs/$1" name="$2" first="${3:-0}" count="${4:-1000}" exp tmp
  exp="$(basename "$1" .json)"
  # GMT_FRESH=1 starts an experiment's table anew once per call (table3a and table3b share one
  # file): the earlier results file and its journal are deleted, so --resume finds nothing to keep
  local fresh=0
  [ "${GMT_FRESH:-0}" = 1 ] && case " $FRESH_DONE " in *" $exp "*) ;; *) fresh=1 ;; esac
  if [ -f "$RESULTS/$exp.json" ] || [ -f "$RESULTS/$exp.json.journal" ]; then
    if [ "$fresh" = 1 ] || { [ -f "$RESULTS/$exp.json" ] && ! grep -q '"batch_sample_every"' "$RESULTS/$exp.json"; }; then
      rm -f "$RESULTS/$exp.json" "$RESULTS/$exp.json.journal"
      stamp "deleted the earlier $exp.json and its journal: the table starts anew (git keeps the committed one)"
    fi
  fi
  FRESH_DONE="$FRESH_DONE $exp"
  tmp="$cfg"
  if [ "$first" != 0 ] || [ "$count" != 1000 ]; then
    tmp="$ROOT/configs/.gmt_stage_${name}.json"
    python3 - "$cfg" "$tmp" "$first" "$count" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
f, n = int(sys.argv[3]), int(sys.argv[4])
c["datasets"] = c["datasets"][f:f + n]
json.dump(c, open(sys.argv[2], "w"), indent=1)
EOF
  fi
  stamp "== $exp ($name, limit ${LIMIT}s)"
  local lim
  lim="$(call_timeout "$LIMIT")"
  if [ "$lim" = 0 ]; then status=1; echo "!! $name skipped: the device call has no time left"; return; fi
  timeout "$lim" "$RUN" "$tmp" --resume >"$OUT_DIR/$name.log" 2>&1 || { status=1; echo "!! $name failed or timed out (run the stage again to continue)"; }
  pack
  [ "$tmp" != "$cfg" ] && rm -f "$tmp"
  grep -E "^\| |skipped|failed" "$OUT_DIR/$name.log" | head -40
}

if has probe; then
  # name:iterations:rows:threads:spin:split[:grid]; threads = param host_threads (host pool, default min(16, cores)),
  # spin = host_spin_us (idle workers' polling, default 1,000), split = fast_stat_split (auto | warps | leaf: how the
  # stats pass shares a stat leaf's rows), grid = fast_stats_grid (auto | chunk | tree: the stats pass's grid
  # chunk- or tree-fastest, default by the data's size); empty fields take the defaults.
  # GMT_PROBE_SPECS (comma-separated) replaces the list, e.g. "pol:10000::1,pol:10000::" for whole
  # runs with one host thread and with the default pool
  SPECS=("armchair:1000::" "armchair:1000:100000:" "pol:2000::" "elevators:2000::" "cal_housing:2000::" "year_prediction_msd:500::"
         "armchair:1000::1" "pol:2000::1" "pol:2000::16" "pol:2000:::0")
  [ -n "${GMT_PROBE_SPECS:-}" ] && IFS=, read -r -a SPECS <<<"$GMT_PROBE_SPECS"
  for spec in "${SPECS[@]}"; do
    IFS=: read -r name it rows thr spin split grid extra <<<"$spec"
    # A misplaced field would run the default silently (spin "warps" once cost a device call):
    # every field is checked before anything runs.
    if [ -n "$extra" ] || ! [[ "$it" =~ ^[0-9]+$ ]] || ! [[ "$rows$thr$spin" =~ ^[0-9]*$ ]] ||
       ! [[ "$split" =~ ^(|auto|warps|leaf)$ ]] || ! [[ "$grid" =~ ^(|auto|chunk|tree)$ ]]; then
      echo "!! probe spec '$spec': expected name:iterations:rows:threads:spin:split[:grid] (integers; split auto|warps|leaf; grid auto|chunk|tree)" >&2
      status=2; continue
    fi
    tag="$name${rows:+_$rows}${thr:+_t$thr}${spin:+_s$spin}${split:+_$split}${grid:+_g$grid}"
    stamp "== probe $tag ($it iterations)"
    lim="$(call_timeout 180)"
    if [ "$lim" = 0 ]; then status=1; echo "!! probe $tag skipped: the device call has no time left"; continue; fi
    timeout "$lim" "$RUN" --train gmt --dataset "$name" ${rows:+--rows "$rows"} --backend cuda --param iterations="$it" \
      ${thr:+--param host_threads=$thr} ${spin:+--param host_spin_us=$spin} ${split:+--param fast_stat_split=$split} \
      ${grid:+--param fast_stats_grid=$grid} --quiet \
      --model-out "$OUT_DIR/probe_$tag.model.json" --metrics-out "$OUT_DIR/probe_$tag.json" >"$OUT_DIR/probe_$tag.log" 2>&1 ||
      { status=1; echo "!! probe $tag failed"; tail -5 "$OUT_DIR/probe_$tag.log"; }
  done
  python3 "$ROOT/scripts/device/gmt_probe_summary.py" "$OUT_DIR"
fi

if has ab; then
  # GMT_AB_PARAM="NAME=V1|V2": pairs (V1, V2) alternate, V1 first in odd pairs and second in even ones
  # (a machine that drifts during the stage then favours neither value).
  ab_name="${GMT_AB_PARAM%%=*}"; ab_vals="${GMT_AB_PARAM#*=}"; ab_b="${ab_vals%%|*}"; ab_a="${ab_vals#*|}"
  if [ -z "${GMT_AB_PARAM:-}" ] || [ "$ab_vals" = "$GMT_AB_PARAM" ] || [ "$ab_a" = "$ab_vals" ] || ! [[ "$ab_name" =~ ^[a-z0-9_]+$ ]]; then
    echo "!! ab: GMT_AB_PARAM must be NAME=V1|V2 with NAME a gmt param (got '${GMT_AB_PARAM:-}')" >&2
    status=2
  else
    for k in $(seq 1 "${GMT_AB_PAIRS:-3}"); do
      order="$ab_b $ab_a"; [ $((k % 2)) = 0 ] && order="$ab_a $ab_b"
      for name in ${GMT_AB_SETS:-elnino pol}; do
        for v in $order; do
          tag="${name}__${ab_name}=${v}_$k"
          lim="$(call_timeout 120)"
          if [ "$lim" = 0 ]; then status=1; echo "!! ab $tag skipped: the device call has no time left"; continue; fi
          stamp "== ab $tag"
          timeout "$lim" "$RUN" --train gmt --dataset "$name" --backend cuda --param iterations=10000 --param "$ab_name=$v" --quiet \
            --metrics-out "$OUT_DIR/ab_$tag.json" >"$OUT_DIR/ab_$tag.log" 2>&1 || { status=1; echo "!! ab $tag failed"; tail -5 "$OUT_DIR/ab_$tag.log"; }
        done
      done
    done
    python3 "$ROOT/scripts/device/gmt_probe_summary.py" --ab "$OUT_DIR" | tee "$OUT_DIR/ab_summary.txt"
  fi
fi

if has hostprof; then
  for name in ${GMT_HOSTPROF_SETS:-pol elnino}; do
    stamp "== host profile $name (10000 iterations)"
    lim="$(call_timeout 240)"
    if [ "$lim" = 0 ]; then status=1; echo "!! host profile $name skipped: the device call has no time left"; continue; fi
    GPUDM_PROFILE_OUT="$OUT_DIR/hostprof_$name.txt" timeout "$lim" "$RUN" --train gmt --dataset "$name" --backend cuda --param iterations=10000 \
      --quiet --metrics-out "$OUT_DIR/hostprof_$name.json" >"$OUT_DIR/hostprof_$name.log" 2>&1 ||
      { status=1; echo "!! host profile $name failed"; tail -5 "$OUT_DIR/hostprof_$name.log"; continue; }
    python3 "$ROOT/scripts/profile_report.py" "$OUT_DIR/hostprof_$name.txt" --top 40 >"$OUT_DIR/hostprof_${name}_report.txt" 2>&1
    python3 "$ROOT/scripts/profile_report.py" "$OUT_DIR/hostprof_$name.txt" --top 40 --under GmtEA::run >"$OUT_DIR/hostprof_${name}_report_ea.txt" 2>&1
    : >"$OUT_DIR/hostprof_${name}_lines.txt"
    read -r -a fns <<<"${GMT_HOSTPROF_LINES:-finish_tree GmtEA::mutate propagate_stats_from_keys}"
    for fn in "${fns[@]}"; do  # where in these functions, by source line (errors kept in the file)
      python3 "$ROOT/scripts/profile_report.py" "$OUT_DIR/hostprof_$name.txt" --top 30 --lines "$fn" 2>>"$OUT_DIR/hostprof_${name}_lines.txt" |
        sed -n '/^lines of/,$p' >>"$OUT_DIR/hostprof_${name}_lines.txt"
    done
    head -30 "$OUT_DIR/hostprof_${name}_report_ea.txt"
  done
fi

if has ncu; then
  NCU="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)"
  if [ -n "$NCU" ]; then
    for spec in "armchair:" "pol:"; do
      IFS=: read -r name rows <<<"$spec"
      stamp "== ncu $name"
      timeout 240 "$NCU" --kernel-name regex:fused_ --launch-skip 40 --launch-count 8 --section SpeedOfLight --section Occupancy \
        --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis --section SchedulerStats \
        "$RUN" --train gmt --dataset "$name" ${rows:+--rows "$rows"} --backend cuda --param iterations=30 --quiet \
        >"$OUT_DIR/ncu_$name.txt" 2>&1 || echo "!! ncu $name failed (exit $?)"
      grep -E "fused_|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Block Limit" "$OUT_DIR/ncu_$name.txt" | head -60
    done
  else
    echo "ncu not found"
  fi
fi

if has ncu || has ncusrc; then
  NCU="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)"
  if [ -n "$NCU" ]; then
    # Where the stats kernel's instructions and stalls are, per source line (-lineinfo builds):
    # one launch per set of GMT_NCU_SETS (default armchair), the full set and the source page (CUDA
    # lines with their SASS).
    # GMT_NCU_ITERATIONS (default 30): the induction's length; the launch profiled is the 20th
    # from its end (late iterations: the run's large trees), at least the 11th.
    NIT="${GMT_NCU_ITERATIONS:-30}"
    NSKIP=$(( NIT > 30 ? NIT - 20 : 10 ))
    for name in ${GMT_NCU_SETS:-armchair}; do
      stamp "== ncu source page, fused_stats_kernel ($name, launch $NSKIP of $NIT iterations)"
      [ "$(call_timeout 240)" = 0 ] && { echo "!! ncu $name skipped: the device call has no time left"; break; }
      timeout "$(call_timeout 240)" "$NCU" --kernel-name regex:fused_stats --launch-skip "$NSKIP" --launch-count 1 --set full --import-source yes \
        --page source --print-source cuda,sass "$RUN" --train gmt --dataset "$name" --backend cuda --param iterations="$NIT" --quiet \
        >"$OUT_DIR/ncu_source_$name.txt" 2>&1 || echo "!! ncu source page failed (exit $?)"
      [ "$(call_timeout 240)" = 0 ] && break
      timeout "$(call_timeout 240)" "$NCU" --kernel-name regex:fused_stats --launch-skip "$NSKIP" --launch-count 1 --set full \
        "$RUN" --train gmt --dataset "$name" --backend cuda --param iterations="$NIT" --quiet \
        >"$OUT_DIR/ncu_full_$name.txt" 2>&1 || echo "!! ncu full set failed (exit $?)"
      gzip -f "$OUT_DIR/ncu_source_$name.txt"
    done
    for name in ${GMT_NCU_SETS:-armchair}; do
      grep -E "Duration|Executed Ipc|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Executed Instructions  " "$OUT_DIR/ncu_full_$name.txt" | head -12
    done
  fi
fi

has table4 && run_table gmt_table4.json table4
has table3a && run_table gmt_table3.json table3a 0 8
has table3b && run_table gmt_table3.json table3b 8 7
has table3mv && run_table gmt_table3.json table3mv 7 1  # Mv alone (drop its runs from the results file first)
has figs && run_table gmt_fig18.json fig18

if has weka; then
  stamp "== Weka study, GMT on the GPU (10,000 iterations, no time cap)"
  BUILD="$BUILD" BACKEND=cuda ITERATIONS=10000 MAX_SECONDS=0 SKIP_WEKA=1 WEKA_FROM="$ROOT/results/h200/gmt_weka_study" \
    OUT_DIR="$RESULTS/gmt_weka_study_gpu" timeout "$LIMIT" bash "$ROOT/scripts/peers/weka_study.sh" >"$OUT_DIR/weka.log" 2>&1 ||
    { status=1; echo "!! weka study failed or timed out"; }
  tail -20 "$OUT_DIR/weka.log"
fi

if has generalisation; then
  GEN="$BUILD/generalisation"
  mkdir -p "$GEN"
  # Runs committed at the same GMT code need not run again (copy them in first; GMT_GEN_FRESH=1: all anew).
  [ "${GMT_GEN_FRESH:-0}" = 1 ] || [ ! -d "$RESULTS/gmt_generalisation/runs" ] || cp -r --update=none "$RESULTS/gmt_generalisation/runs/." "$GEN/"
  jobs_file="$(mktemp)"
  PART="${GMT_GEN_PART_FOLDS:-2}"
  gen_in_parts() { case " ${GMT_GEN_PART_SETS-elnino} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
  part_ranges() { local a; for ((a = 0; a < 10; a += PART)); do echo "$a-$(( a + PART - 1 < 9 ? a + PART - 1 : 9 ))"; done; }
  for seed in ${GMT_GEN_SEEDS:-1 2 3}; do
    for v in ${GMT_GEN_VARIANTS:-rule_off:rows_per_param=0 rule:rows_per_param=1}; do
      for ds in ${GMT_GEN_SETS:-armchair10k 2dplanes elevators cal_housing fried house8l house16h pol mv elnino}; do
        [ -s "$GEN/${v%%:*}/s$seed/$ds.json" ] && continue
        if gen_in_parts "$ds"; then
          for r in $(part_ranges); do
            [ -s "$GEN/${v%%:*}/s$seed/$ds.part$r.json" ] || echo "$seed $v $ds $r" >> "$jobs_file"
          done
        else
          echo "$seed $v $ds -" >> "$jobs_file"
        fi
      done
    done
  done
  # One run at a time. Measured on the H200 (16 cores): six runs sharing the GPU time-sliced
  # finished none of their sets in 500 s, and eight under an MPS daemon took ~10x as long each as
  # one alone (pol 10 folds: 106 s alone), less work per second than one run: a run's host side
  # (the EA, the evaluator's pool) needs several cores.
  par=1
  stamp "== generalisation: $(wc -l < "$jobs_file") runs to do, $par at once"
  gen_one() {  # gen_one SEED VARIANT DATASET FOLDS ("-": all 10; else a part, e.g. 0-1)
    local seed="$1" name="${2%%:*}" kvs="${2#*:}" ds="$3" folds="$4" lim dir kv t0 extra=() stem
    for kv in ${kvs//,/ }; do extra+=(--param "$kv"); done
    lim="$(call_timeout 590)"
    [ "$lim" = 0 ] && return 1
    dir="$GEN/$name/s$seed"
    mkdir -p "$dir"
    stem="$ds"
    if [ "$folds" != - ]; then stem="$ds.part$folds"; extra+=(--cv-folds "$folds"); fi
    t0=$(date +%s)
    if timeout "$lim" "$RUN" --train gmt --dataset "$ds" --cv 10 --cv-only --seed "$seed" --backend cuda --quiet \
         --param host_threads="${GMT_GEN_HOST_THREADS:-0}" "${extra[@]}" --metrics-out "$dir/$stem.json.tmp" >"$dir/$stem.log" 2>&1; then
      # the run's provenance into its metrics (committed runs are reused by later calls)
      python3 - "$dir/$stem.json.tmp" "$dir/$stem.json" "${GPUDM_GIT_SHA:-unknown}" "$GPU_NAME" "$par" "$ROOT/scripts" <<'PYEOF'
import datetime, json, sys
sys.path.insert(0, sys.argv[6])
import results_json
m = json.load(open(sys.argv[1]))
m["provenance"] = {"git_sha": sys.argv[3], "gpu": sys.argv[4],
                   "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   "processes_sharing_the_gpu": int(sys.argv[5])}
results_json.dump(m, sys.argv[2])
PYEOF
      rm -f "$dir/$stem.json.tmp"
      stamp "   $name seed $seed $stem: $(( $(date +%s) - t0 )) s"
      if [ "$folds" != - ]; then  # the whole run once every part is there
        local parts=() r
        for r in $(part_ranges); do
          [ -s "$dir/$ds.part$r.json" ] || return 0
          parts+=("$dir/$ds.part$r.json")
        done
        python3 "$ROOT/scripts/peers/gmt_generalisation.py" merge "$dir/$ds.json" "${parts[@]}" || return 1
      fi
    else
      rm -f "$dir/$stem.json.tmp"
      stamp "   !! $name seed $seed $stem: stopped after $(( $(date +%s) - t0 )) s ($(tail -1 "$dir/$stem.log"))"
      return 1
    fi
  }
  while read -r seed v ds folds; do
    [ "$(call_timeout 60)" = 0 ] && { echo "!! generalisation: the device call has no time left; run the stage again"; status=1; break; }
    gen_one "$seed" "$v" "$ds" "$folds" &
    while [ "$(jobs -rp | wc -l)" -ge "$par" ]; do wait -n || true; done
  done < "$jobs_file"
  wait
  rm -f "$jobs_file"
  left=0
  for seed in ${GMT_GEN_SEEDS:-1 2 3}; do for v in ${GMT_GEN_VARIANTS:-rule_off:rows_per_param=0 rule:rows_per_param=1}; do
    for ds in ${GMT_GEN_SETS:-armchair10k 2dplanes elevators cal_housing fried house8l house16h pol mv elnino}; do
      [ -s "$GEN/${v%%:*}/s$seed/$ds.json" ] || left=$((left + 1))
    done; done; done
  [ "$left" = 0 ] || { status=1; echo "!! generalisation: $left runs left (run the stage again while the machine is warm)"; }
  rm -rf "$OUT_DIR/generalisation"
  cp -r "$GEN" "$OUT_DIR/generalisation"
fi

if has leafrule; then
  for v in ${GMT_LEAFRULE_VALUES:-0 1.0001 2 3}; do
    lim="$(call_timeout 300)"
    if [ "$lim" = 0 ]; then status=1; echo "!! leafrule rows_per_param=$v skipped: the device call has no time left"; continue; fi
    stamp "== leaf rule study: rows_per_param=$v"
    BUILD="$BUILD" BACKEND=cuda ITERATIONS=10000 MAX_SECONDS=0 SKIP_WEKA=1 WEKA_FROM="$ROOT/results/h200/gmt_weka_study" \
      GMT_PARAMS="rows_per_param=$v" OUT_DIR="$OUT_DIR/leafrule/rpp_$v" WORK="${TMPDIR:-/tmp}/gmt_leafrule_$v" \
      timeout "$lim" bash "$ROOT/scripts/peers/weka_study.sh" >"$OUT_DIR/leafrule_$v.log" 2>&1 ||
      { status=1; echo "!! leaf rule study rows_per_param=$v failed or timed out"; }
    grep -E "^\| " "$OUT_DIR/leafrule/rpp_$v/table.md" 2>/dev/null | cut -d'|' -f2-7
  done
fi

if has smoke; then
  for c in gmt_table3 gmt_table4 gmt_fig18; do
    "$RUN" "$ROOT/configs/$c.json" --smoke -o "$OUT_DIR/smoke" -q >"$OUT_DIR/smoke_$c.log" 2>&1 || status=1
    tail -5 "$OUT_DIR/smoke_$c.log"
  done
fi

if has agree; then
  sets="${GMT_AGREE_SETS:-elevators elnino}"
  tmp="$ROOT/configs/.gmt_agree.json"
  python3 - "$ROOT/configs/gmt_table3.json" "$tmp" $sets <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["datasets"] = [d for d in c["datasets"] if (d if isinstance(d, str) else d.get("name")) in sys.argv[3:]]
json.dump(c, open(sys.argv[2], "w"), indent=1)
EOF
  stamp "== agree: gmt_table3 on $sets"
  lim="$(call_timeout 400)"
  if [ "$lim" = 0 ]; then status=1; echo "!! agree skipped: the device call has no time left"; else
    rm -rf "$OUT_DIR/agree"
    timeout "$lim" "$RUN" "$tmp" -o "$OUT_DIR/agree" -q >"$OUT_DIR/agree.log" 2>&1 || { status=1; echo "!! agree run failed"; tail -5 "$OUT_DIR/agree.log"; }
    python3 "$ROOT/scripts/device/gmt_agree.py" "$RESULTS/gmt_table3.json" "$OUT_DIR/agree/gmt_table3.json" | tee "$OUT_DIR/agree_summary.md" ||
      status=1
  fi
  rm -f "$tmp"
fi

if has plots; then
  python3 "$ROOT/plots/gmt_figures.py" "$RESULTS" -o "$RESULTS/plots" 2>&1 | tail -40
fi
stamp "gmt.sh: status $status"
exit $status
