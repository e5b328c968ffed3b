#!/usr/bin/env bash
# Tables of record on the GPU machine: each config run whole at the call's commit, in order, under
# the call's time limit (a table cut there goes on in the next call with --resume, once its partial
# results file and journal, packed here, are put back into the tree: every call's copy of the tree
# replaces results/ on the machine).
# Before the device call, here: scripts/device/stage_deps.sh and
#   GPUDM_DATA_DIR=../shared/datasets scripts/device/cache_datasets.sh configs/<each config>.json
# then carry [".deps.tar.xz", "datasets/cache"], set GPUDM_DATA_DIR=$PWD/datasets/cache and GPUDM_GIT_SHA=<the
# commit, written literally into the command: the device copy's git metadata can name an older commit
# than the tree that runs, so $(git rev-parse HEAD) there is not the commit>.
#
#   OUT=$OUT [TABLES_FRESH="exp ..."] scripts/device/tables.sh CONFIG[:BACKEND,...]...
#     CONFIG        configs/x.json or x; ":cuda" runs only that backend (run_experiment -b), for a
#                   table of record that names one, e.g. gp_accuracy:cuda (accuracy is the same on
#                   every backend; its CPU copy is results/cpu/gp_accuracy.*, run with -b openmp)
#     TABLES_FRESH  experiments whose results file and journal in the tree are deleted first, so the
#                   table is made anew at this commit (git keeps the committed one); name a table
#                   here in its first call only; refused when the committed file holds ok runs on
#                   more GPUs than this machine has (they would come back skipped: run that table
#                   on a machine with enough GPUs, or set TABLES_FRESH_DROP_GPU_CELLS=1 to lose them)
#     TABLES_CONTINUE experiments whose committed results file is deleted but whose journal (a cut
#                   fresh run's, committed or put back into the tree) is kept: --resume then finishes
#                   the fresh run alone (with the file present it would count the file's runs too)
# Packs results/<tag>/<experiment>.* (journals included; a composite's parts too) and the logs into $OUT/tables_results.tar.gz.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. "$ROOT/scripts/device/common.sh"
[ $# -gt 0 ] || { echo "usage: scripts/device/tables.sh CONFIG..." >&2; exit 2; }
LOGS="$ROOT/logs/tables"
mkdir -p "$LOGS"
TAG="$(results_tag)"
RESULTS="$ROOT/results/$TAG"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
exps=()
declare -A backends=()
for c in "$@"; do
  b=""; case "$c" in *:*) b="${c#*:}"; c="${c%%:*}" ;; esac
  c="${c#configs/}"; c="${c%.json}"; exps+=("$c"); backends[$c]="$b"
done
# A composite config's parts write their own results files (and journals): they are packed too.
parts=()
while read -r p; do [ -n "$p" ] && parts+=("$p"); done < <(python3 "$ROOT/scripts/device/config_tree.py" --parts $(printf 'configs/%s.json ' "${exps[@]}"))
pack() {
  [ -n "${OUT:-}" ] || return 0
  mkdir -p "$OUT"
  local files=()
  # (every results folder: run_experiment names its own from the machine, results_tag the GPU's)
  for e in "${exps[@]}" ${parts[@]+"${parts[@]}"}; do for f in "$ROOT"/results/*/"$e".*; do [ -e "$f" ] && files+=("${f#"$ROOT"/}"); done; done
  tar -czf "$OUT/tables_results.tar.gz" -C "$ROOT" "${files[@]}" logs/tables 2>/dev/null
  stamp "packed $OUT/tables_results.tar.gz (${#files[@]} results files)"
}
trap pack EXIT
gpus="$(gpu_count)"
for e in ${TABLES_FRESH:-}; do
  [ -f "$RESULTS/$e.json" ] && [ -z "${TABLES_FRESH_DROP_GPU_CELLS:-}" ] || continue
  n="$(python3 "$ROOT/scripts/device/gpu_cells.py" "$RESULTS/$e.json" "$gpus")" || exit 2
  if [ "$n" -gt 0 ]; then
    echo "!! TABLES_FRESH=$e: $RESULTS/$e.json holds $n ok runs on more than $gpus GPU(s); a fresh run here would skip them and lose the measurements (run it on a machine with more GPUs, or TABLES_FRESH_DROP_GPU_CELLS=1)" >&2
    exit 2
  fi
done
stamp "== build run_experiment"
BUILD="$BUILD" OUT="$(mktemp -d)" GPUDM_BUILD_TARGETS="run_experiment" bash "$ROOT/scripts/device/run_all.sh" build \
  >"$LOGS/build.log" 2>&1 || { tail -30 "$LOGS/build.log"; exit 1; }
[ -d "$ROOT/.deps/usr" ] && export LD_LIBRARY_PATH="$ROOT/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-16}" OMP_PROC_BIND="${OMP_PROC_BIND:-spread}"
for e in ${TABLES_FRESH:-}; do
  rm -f "$RESULTS/$e.json" "$RESULTS/$e.json.journal"
  stamp "deleted the earlier $e.json and its journal: the table starts anew"
done
for e in ${TABLES_CONTINUE:-}; do
  [ -f "$RESULTS/$e.json.journal" ] || { echo "!! TABLES_CONTINUE=$e: no journal $RESULTS/$e.json.journal" >&2; exit 2; }
  rm -f "$RESULTS/$e.json"
  stamp "deleted the earlier $e.json: its journal's fresh run goes on"
done
status=0
for e in "${exps[@]}"; do
  lim="$(call_timeout 590)"
  if [ "$lim" = 0 ]; then status=1; echo "!! $e: the call has no time left (run it again: --resume)"; continue; fi
  stamp "== $e${backends[$e]:+ (-b ${backends[$e]})} (limit ${lim}s); $(host_check)"
  bargs=(); IFS=, read -ra bs <<<"${backends[$e]}"; for b in ${bs[@]+"${bs[@]}"}; do bargs+=(-b "$b"); done
  timeout "$lim" "$BUILD/experiments/run_experiment" "configs/$e.json" --resume ${bargs[@]+"${bargs[@]}"} >"$LOGS/$e.log" 2>&1 ||
    { status=1; echo "!! $e failed or timed out (run it again: --resume continues)"; }
  grep -E "^run_experiment: " "$LOGS/$e.log" | tail -1
done
stamp "tables.sh: status $status; $(host_check)"
exit $status
