#!/usr/bin/env bash
# compute-sanitizer over the GPU tests (docs/reliability.md): every test binary that has
# ctest-labelled `gpu` tests runs once per tool with a gtest filter naming exactly those tests.
#   BUILD=build-device OUT_DIR=$OUT scripts/device/sanitize.sh
#   (or: GPUDM_AREAS=sanitize scripts/device/run_all.sh areas, after the build stage)
# Environment: BUILD (a CUDA build with the tests; run_all.sh's build-device by default),
# OUT_DIR (default out), GPUDM_SANITIZE_TOOLS (default "memcheck racecheck"; synccheck and
# initcheck work too), GPUDM_SANITIZE_TIMEOUT (s per binary and tool, default 300),
# GPUDM_SANITIZE_BINARIES (an extended regex the binary's name must match; default: every binary).
# Writes $OUT_DIR/sanitize/<binary>.<tool>.log, summary.tsv and summary.md (binary, tool, tests,
# errors reported, exit status, seconds). Exit status 1 when a tool reported an error or a run
# failed or timed out.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
. "$ROOT/scripts/device/common.sh"  # BUILD, GPUDM_DATA_DIR
OUT_DIR="${OUT_DIR:-${OUT:-$ROOT/out}}"
case "$OUT_DIR" in /*) ;; *) OUT_DIR="$ROOT/$OUT_DIR" ;; esac
LOG="$OUT_DIR/sanitize"
mkdir -p "$LOG"
TOOLS="${GPUDM_SANITIZE_TOOLS:-memcheck racecheck}"
LIMIT="${GPUDM_SANITIZE_TIMEOUT:-300}"
log() { echo "[sanitize] $*" >&2; }

CS="$(command -v compute-sanitizer || true)"
for c in "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" "${CUDA_HOME:-/usr/local/cuda}/compute-sanitizer/compute-sanitizer" \
         /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -z "$CS" ] && [ -x "$c" ] && CS="$c"
done
[ -n "$CS" ] || { log "compute-sanitizer not found (CUDA toolkit bin/)"; exit 1; }
[ -f "$BUILD/CMakeCache.txt" ] || { log "no build in $BUILD: run scripts/device/run_all.sh build first"; exit 1; }

# binary <TAB> filter (the gpu tests of that binary, ':'-joined), from ctest's own test list.
(cd "$BUILD" && ctest -L gpu --show-only=json-v1) | python3 -c '
import json, sys, collections
tests = json.load(sys.stdin).get("tests", [])
by_bin = collections.OrderedDict()
for t in tests:
    cmd = t.get("command") or []
    if not cmd:
        continue
    f = [a[len("--gtest_filter="):] for a in cmd[1:] if a.startswith("--gtest_filter=")]
    by_bin.setdefault(cmd[0], []).extend(f or ["*"])
for b, f in by_bin.items():
    print(b + "\t" + ("*" if "*" in f else ":".join(f)))
' >"$LOG/binaries.tsv" || { log "cannot list the gpu tests"; exit 1; }
if [ -n "${GPUDM_SANITIZE_BINARIES:-}" ]; then
  awk -F'\t' -v re="${GPUDM_SANITIZE_BINARIES}" '{ n = $1; sub(/.*\//, "", n); if (n ~ re) print }' "$LOG/binaries.tsv" >"$LOG/binaries.sel"
  mv "$LOG/binaries.sel" "$LOG/binaries.tsv"
fi
[ -s "$LOG/binaries.tsv" ] || { log "no gpu-labelled tests in $BUILD${GPUDM_SANITIZE_BINARIES:+ matching '$GPUDM_SANITIZE_BINARIES'}"; exit 1; }

status=0
printf "binary\ttool\ttests\terrors\texit\tseconds\n" >"$LOG/summary.tsv"
while IFS=$'\t' read -r bin filter; do
  name="$(basename "$bin")"
  ntests=$(echo "$filter" | tr ':' '\n' | grep -c .)
  for tool in $TOOLS; do
    extra=()
    [ "$tool" = racecheck ] && extra=(--racecheck-report analysis)
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    t0=$(date +%s)
    log "$name: $tool ($ntests tests)"
    lim="$(call_timeout "$LIMIT")"
    if [ "$lim" = 0 ]; then log "$name $tool skipped: the device call has no time left"; status=1; continue; fi
    timeout "$lim" "$CS" --tool "$tool" "${extra[@]}" --error-exitcode 99 --log-file "$LOG/$name.$tool.log" \
      "$bin" --gtest_filter="$filter" >"$LOG/$name.$tool.out" 2>&1
    rc=$?
    secs=$(( $(date +%s) - t0 ))
    errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+' "$LOG/$name.$tool.log" 2>/dev/null | tail -1 | grep -Eo '[0-9]+' || true)
    # racecheck --racecheck-report analysis prints "RACECHECK SUMMARY: N hazards displayed".
    hazards=$(grep -Eo 'RACECHECK SUMMARY: [0-9]+' "$LOG/$name.$tool.log" 2>/dev/null | tail -1 | grep -Eo '[0-9]+' || true)
    [ -n "$hazards" ] && errors=$(( ${errors:-0} + hazards ))
    [ $rc -eq 124 ] && errors="${errors:-?} (timed out after ${lim}s)"
    printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$name" "$tool" "$ntests" "${errors:-?}" "$rc" "$secs" >>"$LOG/summary.tsv"
    if [ $rc -ne 0 ] || [ "${errors:-?}" != 0 ]; then status=1; log "$name $tool: exit $rc, errors ${errors:-?}"; fi
  done
done <"$LOG/binaries.tsv"

{
  echo "# compute-sanitizer over the GPU tests"
  echo
  echo "$(date -u +%FT%TZ); $("$CS" --version 2>/dev/null | tail -1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo
  echo "| binary | tool | tests | errors | exit | seconds |"
  echo "|---|---|---:|---:|---:|---:|"
  tail -n +2 "$LOG/summary.tsv" | awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6}'
  echo
  echo "Exit 99: the tool reported errors; 124: timed out. Logs: sanitize/<binary>.<tool>.log."
} >"$LOG/summary.md"
cat "$LOG/summary.md"
exit $status
