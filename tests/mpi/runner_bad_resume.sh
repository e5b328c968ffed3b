#!/usr/bin/env bash
# An error only rank 0 can meet (here: --resume of a corrupt results file, which only rank
# 0 reads) ends every rank at once with rank 0's error, not after the collective timeout.
# Usage: runner_bad_resume.sh RUN_EXPERIMENT MPIEXEC CONFIG   (ctest, label mpi)
set -uo pipefail
RUN="$1" MPIEXEC="$2" CFG="$3"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
name="$(basename "$CFG" .json)"
echo '{"schema_version": 1, "runs": [' >"$OUT/$name-smoke.json"   # cut short: not JSON
t0=$(date +%s)
"$MPIEXEC" -n 2 "$RUN" "$CFG" --smoke -b sequential --resume -o "$OUT" -q >"$OUT/log" 2>&1
rc=$?
secs=$(( $(date +%s) - t0 ))
cat "$OUT/log"
[ $rc -ne 0 ] || { echo "FAIL: exit 0 on a corrupt results file"; exit 1; }
[ $secs -lt "${GPUDM_MPI_TIMEOUT:-600}" ] || { echo "FAIL: ended only after the collective timeout ($secs s)"; exit 1; }
grep -q "$name-smoke.json" "$OUT/log" || { echo "FAIL: the error does not name the results file"; exit 1; }
echo "PASS: every rank ended in $secs s with rank 0's error (exit $rc)"
