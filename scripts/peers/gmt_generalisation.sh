#!/usr/bin/env bash
# The Weka side of GMT's generalisation study: Weka 3.6 M5P (-M 4) and REPTree on the same 10-fold
# splits that GMT's `--cv 10 --seed S` uses (tools/gmt/gmt_study_split --folds, one cv_folds), one
# JVM per learner and fold, PARALLEL at once (default 2), niced.
#   BUILD=build scripts/peers/gmt_generalisation.sh [dataset...]
# The study, end to end:
#   1. GMT on the GPU machine: scripts/device/gmt.sh generalisation (every set, seed, variant;
#      its metrics come back in the packed logs/gmt/generalisation; committed runs under
#      results/<gpu>/gmt_generalisation/runs are not run again);
#   2. here, where Java and weka.jar are (Debian package weka): this script. Weka's outputs go to
#      $RAW (default $TMPDIR/gmt_generalisation_weka: <set>/s<seed>/f<k>.{M5P,REPTree}.{txt,time}
#      and folds.json, the folds' test-row fingerprints; ~25 MB a seed), read into $SUMMARY
#      (default results/cpu/gmt_generalisation_weka.json) at the end;
#   3. scripts/peers/gmt_generalisation.py render --gmt results/<gpu>/gmt_generalisation/runs
#      --weka $SUMMARY --out results/<gpu>/gmt_generalisation: the table, JSON, CSV and plot.
# SEEDS (default "1 2 3"), FOLDS (default 10). A fold whose two outputs exist is skipped, so the
# script resumes where it stopped. The fold CSVs live in $WORK while their set and seed run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
OUT_DIR="${RAW:-${TMPDIR:-/tmp}/gmt_generalisation_weka}"
SUMMARY="${SUMMARY:-$ROOT/results/cpu/gmt_generalisation_weka.json}"
WORK="${WORK:-${TMPDIR:-/tmp}/gmt_generalisation}"
SEEDS="${SEEDS:-1 2 3}"
FOLDS="${FOLDS:-10}"
PARALLEL="${PARALLEL:-2}"
WEKA_JAR="${WEKA_JAR:-/usr/share/java/weka.jar}"
JAVA_MEM="${JAVA_MEM:-3g}"
[ -f "$WEKA_JAR" ] || { echo "gmt_generalisation: weka.jar not found at $WEKA_JAR (apt-get install weka)" >&2; exit 1; }
command -v java >/dev/null || { echo "gmt_generalisation: java not found (apt-get install default-jre-headless)" >&2; exit 1; }
SPLIT="$BUILD/tools/gmt_study_split"
[ -x "$SPLIT" ] || { echo "gmt_generalisation: build the target gmt_study_split in $BUILD first" >&2; exit 1; }
if [ -z "${GPUDM_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/datasets" ]; then
  export GPUDM_DATA_DIR="$(cd "$ROOT/../shared/datasets" && pwd)"
fi
DEFAULT=(armchair10k pol elevators cal_housing house16h house8l 2dplanes fried mv elnino)
DATASETS=("${@:-${DEFAULT[@]}}")
mkdir -p "$OUT_DIR" "$WORK"
{
  echo "machine: $(hostname), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  echo "date_utc: $(date -u +%FT%TZ)"
  echo "weka: $(java -cp "$WEKA_JAR" weka.core.Version 2>/dev/null | head -1)"
  echo "java: $(java -version 2>&1 | head -1)"
  echo "commit: $(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
  echo "parallel: $PARALLEL, seeds: $SEEDS, folds: $FOLDS, datasets: ${DATASETS[*]}"
} >> "$OUT_DIR/environment.txt"

# wall, user and sys seconds of a command into $1
timed() {
  local out="$1"; shift
  /usr/bin/time -f "%e %U %S" -o "$out" "$@"
}
weka_fold() {  # weka_fold LEARNER TRAIN TEST OUT_STEM
  local m="$1" tr="$2" te="$3" stem="$4" cls opts
  case $m in
    M5P) cls=weka.classifiers.trees.M5P; opts=(-M 4) ;;
    REPTree) cls=weka.classifiers.trees.REPTree; opts=(-M 2 -V 0.001 -N 3 -S 1 -L -1) ;;
  esac
  [ -s "$stem.$m.txt" ] && grep -q "Error on test data" "$stem.$m.txt" && return 0
  timed "$stem.$m.time" nice -n 10 java -Xmx"$JAVA_MEM" -XX:+UseSerialGC -cp "$WEKA_JAR" "$cls" "${opts[@]}" -t "$tr" -T "$te" \
    > "$stem.$m.txt.tmp" 2>"$stem.$m.err" && mv "$stem.$m.txt.tmp" "$stem.$m.txt" && rm -f "$stem.$m.err"
}
T0=$(date +%s)
for seed in $SEEDS; do
  for ds in "${DATASETS[@]}"; do
    dir="$OUT_DIR/$ds/s$seed"
    mkdir -p "$dir"
    todo=0
    for ((k = 0; k < FOLDS; k++)); do
      for m in M5P REPTree; do grep -qs "Error on test data" "$dir/f$k.$m.txt" || todo=1; done
    done
    [ "$todo" = 0 ] && continue
    # already in the summary (an earlier machine's run): not again
    if [ -f "$SUMMARY" ] && python3 -c 'import json, sys; sys.exit(0 if sys.argv[3] in json.load(open(sys.argv[1]))["sets"].get(sys.argv[2], {}) else 1)' \
         "$SUMMARY" "$ds" "$seed"; then
      continue
    fi
    "$SPLIT" "$ds" "$WORK" --folds "$FOLDS" --seed "$seed" >&2
    cp "$WORK/${ds}_folds.json" "$dir/folds.json"
    for ((k = 0; k < FOLDS; k++)); do
      for m in M5P REPTree; do
        weka_fold "$m" "$WORK/${ds}_f${k}_train.csv" "$WORK/${ds}_f${k}_test.csv" "$dir/f$k" &
        while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n || true; done
      done
    done
    wait
    rm -f "$WORK/${ds}"_f*_{train,test}.csv
    echo "[$(( $(date +%s) - T0 ))s] weka: $ds seed $seed done" >&2
  done
done
python3 "$ROOT/scripts/peers/gmt_generalisation.py" weka-summary "$OUT_DIR" "$SUMMARY"
