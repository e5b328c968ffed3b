#!/usr/bin/env bash
# GPU-machine run of the estimators' check: configs/estimator_check_{gmt,gp,pitt,subtree}.json (each
# slow baseline estimated and measured whole on this machine, the GPU runs recording first), then
# scripts/estimator_check.py -> results/<gpu-tag>/estimator_check.{json,md}.
# Before the device call, here: scripts/device/stage_deps.sh and
#   scripts/device/cache_datasets.sh configs/estimator_check_*.json
# then carry [".deps.tar.xz", "datasets/cache"] and set GPUDM_GIT_SHA=<the commit>.
#
#   scripts/device/estimator_check.sh [FAMILIES]   FAMILIES: comma-separated of gmt,gp,pitt,subtree
#                                                  (or ESTIMATOR_FAMILIES; default all four)
# Env: BUILD (default build-device; built by scripts/device/run_all.sh build when run_experiment is
#      missing), OUT (when set: the results files and logs packed there, estimator_check.tar.gz), OUT_DIR (logs, default
#      logs/estimator_check). Each config appends to its results file (--resume): a run cut by the
#      call's time limit continues in the next call when its journal is carried back.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. "$ROOT/scripts/device/common.sh"
OUT_DIR="${OUT_DIR:-$ROOT/logs/estimator_check}"
mkdir -p "$OUT_DIR"
FAMILIES=",${1:-${ESTIMATOR_FAMILIES:-gmt,gp,pitt,subtree}},"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-16}"
export OMP_PROC_BIND="${OMP_PROC_BIND:-spread}"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
status=0
RUN="$BUILD/experiments/run_experiment"
if [ ! -x "$RUN" ]; then
  stamp "== build run_experiment"
  BUILD_OUT="$(mktemp -d)"
  BUILD="$BUILD" OUT="$BUILD_OUT" GPUDM_BUILD_TARGETS="run_experiment" bash "$ROOT/scripts/device/run_all.sh" build \
    >"$OUT_DIR/build.log" 2>&1 || { tail -40 "$OUT_DIR/build.log"; exit 1; }
  rm -rf "$BUILD_OUT"
fi
[ -d "$ROOT/.deps/usr" ] && export LD_LIBRARY_PATH="$ROOT/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
TAG="$(results_tag)"
RESULTS="$ROOT/results/$TAG"
copy_out() {
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    tar -czf "$OUT/estimator_check.tar.gz" "results/$TAG"/estimator_check* "${OUT_DIR#$ROOT/}" 2>/dev/null
    cp "$RESULTS/estimator_check.md" "$OUT/" 2>/dev/null
  fi
}
trap copy_out EXIT
for fam in gmt gp pitt subtree; do
  case "$FAMILIES" in *",$fam,"*) ;; *) continue ;; esac
  lim="$(call_timeout 420)"
  if [ "$lim" = 0 ]; then status=1; echo "!! $fam skipped: the device call has no time left"; continue; fi
  stamp "== configs/estimator_check_$fam.json (limit ${lim}s)"
  timeout "$lim" "$RUN" "configs/estimator_check_$fam.json" --resume -q >"$OUT_DIR/$fam.log" 2>&1 ||
    { status=1; echo "!! estimator_check_$fam failed or timed out (run it again to continue)"; tail -5 "$OUT_DIR/$fam.log"; }
done
python3 "$ROOT/scripts/estimator_check.py" "$RESULTS" | tail -8
stamp "estimator_check.sh: status $status"
exit $status
