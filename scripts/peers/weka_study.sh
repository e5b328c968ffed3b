#!/usr/bin/env bash
# GMT vs Weka 3.6 M5P and REPTree on the same train/test splits (a quality study).
#   BUILD=build-gmt OUT_DIR=results/cpu/gmt_weka_study ITERATIONS=300 scripts/peers/weka_study.sh [dataset...]
# GMT on the GPU, the full budget (scripts/device/gmt.sh weka does this on the GPU machine):
#   BACKEND=cuda ITERATIONS=10000 MAX_SECONDS=0 SKIP_WEKA=1 WEKA_FROM=results/h200/gmt_weka_study \
#     OUT_DIR=results/<gpu>/gmt_weka_study_gpu scripts/peers/weka_study.sh
#   (GMT_PARAMS="gpu_path=faithful" etc. select the CUDA path; the default is the fast path.)
# Needs: java + /usr/share/java/weka.jar (Debian package weka), a build with the targets
# gmt_study_split and gmt_learner. Writes per dataset the split CSVs (in $WORK), Weka's and
# GMT's outputs (in $OUT_DIR/raw), then $OUT_DIR/table.{csv,md} via weka_table.py.
# Every process is wrapped in /usr/bin/time (wall, user, sys seconds in raw/*.time): on a shared
# machine the CPU seconds are the comparable figure (whole process: JVM start and test scoring for
# Weka, CSV loading and test scoring for GMT), beside each tool's own induction time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
OUT_DIR="${OUT_DIR:-$ROOT/results/cpu/gmt_weka_study}"
WORK="${WORK:-${TMPDIR:-/tmp}/gmt_weka_study}"
ITERATIONS="${ITERATIONS:-10000}"
POPULATION="${POPULATION:-64}"
BACKEND="${BACKEND:-sequential}"
SEED="${SEED:-1}"
# MAX_SECONDS: cap on GMT's loop per dataset (0 = none; the stop is reported as "time").
# PARALLEL: datasets run at once (each GMT process with BACKEND's threads; default 1).
MAX_SECONDS="${MAX_SECONDS:-0}"
# GMT_PARAMS: extra GMT parameters, space-separated key=value (e.g. "rows_per_param=3").
GMT_PARAMS="${GMT_PARAMS:-}"
PARALLEL="${PARALLEL:-1}"
WEKA_JAR="${WEKA_JAR:-/usr/share/java/weka.jar}"
JAVA_MEM="${JAVA_MEM:-4g}"
# SKIP_WEKA=1 WEKA_FROM=<an earlier study folder>: run GMT only and share Weka's outputs (deterministic
# for the same split; their times are those of the machine that ran them) with WEKA_FROM/raw — for
# a machine without Java, e.g. the GPU machine running GMT's full budget on 16 threads.
SKIP_WEKA="${SKIP_WEKA:-0}"
WEKA_FROM="${WEKA_FROM:-}"
if [ "$SKIP_WEKA" = 1 ]; then
  [ -d "$WEKA_FROM/raw" ] || { echo "SKIP_WEKA=1 needs WEKA_FROM=<study folder with raw/*.M5P.txt>" >&2; exit 1; }
  # the folder whose Weka outputs this study shares (weka_table.py reads them there)
  WEKA_FROM="$(realpath --relative-to="$ROOT" "$WEKA_FROM")"
  # a folder that itself shares another's outputs: name that one
  [ -f "$ROOT/$WEKA_FROM/raw/weka_from.txt" ] && WEKA_FROM="$(cat "$ROOT/$WEKA_FROM/raw/weka_from.txt")"
else
  [ -f "$WEKA_JAR" ] || { echo "weka.jar not found at $WEKA_JAR (apt-get install weka)" >&2; exit 1; }
fi
# timed OUT CMD...: wall, user and sys seconds of CMD into OUT (/usr/bin/time, else bash's time)
timed() {
  local out="$1"; shift
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "%e %U %S" -o "$out" "$@"
  else
    local TIMEFORMAT="%R %U %S"
    { time "$@" ; } 2> "$out.err"
    local rc=$?
    tail -1 "$out.err" > "$out"
    rm -f "$out.err"
    return $rc
  fi
}
SPLIT="$BUILD/tools/gmt_study_split"
LEARNER="$BUILD/tools/gmt_learner"
[ -x "$SPLIT" ] && [ -x "$LEARNER" ] || { echo "build the targets gmt_study_split gmt_learner in $BUILD first" >&2; exit 1; }
if [ -z "${GPUDM_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/datasets" ]; then
  export GPUDM_DATA_DIR="$(cd "$ROOT/../shared/datasets" && pwd)"
fi
mkdir -p "$OUT_DIR/raw" "$WORK"
[ "$SKIP_WEKA" = 1 ] && echo "$WEKA_FROM" > "$OUT_DIR/raw/weka_from.txt"

# name|split options (armchair: the 10K reconstruction, as Table 4's smallest)
DEFAULT=(armchair10k pol elevators cal_housing house16h house8l 2dplanes fried mv elnino)
DATASETS=("${@:-${DEFAULT[@]}}")

{
  echo "machine: $(hostname), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  echo "date_utc: $(date -u +%FT%TZ)"
  echo "git_sha: ${GPUDM_GIT_SHA:-$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)}"
  if [ "$SKIP_WEKA" = 1 ]; then
    echo "weka: not run here; outputs shared with $WEKA_FROM/raw (their machine and times; raw/weka_from.txt)"
  else
    echo "weka: $(java -cp "$WEKA_JAR" weka.core.Version 2>/dev/null | head -1)"
    echo "java: $(java -version 2>&1 | head -1)"
  fi
  echo "gmt: iterations=$ITERATIONS population=$POPULATION backend=$BACKEND seed=$SEED max_seconds=$MAX_SECONDS parallel_datasets=$PARALLEL${GMT_PARAMS:+ params: $GMT_PARAMS}"
  echo "load_average_at_start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "datasets: ${DATASETS[*]}"
} > "$OUT_DIR/raw/environment.$$"
# A run of every set replaces the record; a run of some sets adds its block to the record of the
# run whose other sets' outputs it keeps.
if [ $# -eq 0 ]; then mv "$OUT_DIR/raw/environment.$$" "$OUT_DIR/raw/environment.txt"
else cat "$OUT_DIR/raw/environment.$$" >> "$OUT_DIR/raw/environment.txt"; rm -f "$OUT_DIR/raw/environment.$$"; fi

one() {
  local ds="$1" tr te m cls opts kv
  local extra=()
  for kv in $GMT_PARAMS; do extra+=(--param "$kv"); done
  echo "== $ds" >&2
  "$SPLIT" "$ds" "$WORK" --seed "$SEED" >&2
  tr="$WORK/${ds}_train.csv"; te="$WORK/${ds}_test.csv"
  for m in M5P REPTree; do
    case $m in
      M5P) cls=weka.classifiers.trees.M5P; opts=(-M 4) ;;
      REPTree) cls=weka.classifiers.trees.REPTree; opts=(-M 2 -V 0.001 -N 3 -S 1 -L -1) ;;
    esac
    if [ "$SKIP_WEKA" = 1 ]; then  # shared, not copied: raw/weka_from.txt names the folder
      [ -f "$ROOT/$WEKA_FROM/raw/${ds}.$m.txt" ] || [ -f "$ROOT/$WEKA_FROM/raw/${ds}.$m.txt.gz" ] ||
        { echo "weka_study: no $WEKA_FROM/raw/${ds}.$m.txt(.gz)" >&2; exit 1; }
      continue
    fi
    echo "   weka $m" >&2
    timed "$OUT_DIR/raw/${ds}.$m.time" \
      java -Xmx"$JAVA_MEM" -cp "$WEKA_JAR" "$cls" "${opts[@]}" -t "$tr" -T "$te" > "$OUT_DIR/raw/${ds}.$m.txt" 2>/dev/null
    gzip -9f "$OUT_DIR/raw/${ds}.$m.txt"  # kept in results/: M5P prints every leaf's model (weka_output.py reads .gz)
  done
  echo "   gmt ($ITERATIONS iterations)" >&2
  timed "$OUT_DIR/raw/${ds}.gmt.time" \
    "$LEARNER" train --dataset "$tr" --test "$te" --backend "$BACKEND" --seed "$SEED" --quiet \
    --param iterations="$ITERATIONS" --param population="$POPULATION" --param max_seconds="$MAX_SECONDS" "${extra[@]}" \
    --model-out "$OUT_DIR/raw/${ds}.gmt_model.json" --metrics-out "$OUT_DIR/raw/${ds}.gmt_metrics.json" \
    > "$OUT_DIR/raw/${ds}.gmt.txt"
}
for ds in "${DATASETS[@]}"; do
  if [ "$PARALLEL" -le 1 ]; then
    one "$ds"
  else
    one "$ds" &
    while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n || true; done
  fi
done
wait
# the models in the layout of every JSON file under results/ (the learner writes them fully indented)
python3 "$ROOT/scripts/results_json.py" --rewrite "$OUT_DIR"/raw/*.gmt_model.json
python3 "$ROOT/scripts/peers/weka_table.py" "$OUT_DIR"
