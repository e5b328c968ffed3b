#!/usr/bin/env bash
# Issue 26's scaling experiment: configs/mpi_scaling_{gp,pitt,vfdt,gmt}.json under mpirun with 1, 2,
# 4 and 8 ranks (one core each), strong (the config's problem) and weak scaling (GP and Pittsburgh:
# 128,126 Poker rows per rank; the forest: 12 trees per rank; GMT: 8 individuals per rank), then
# scripts/mpi_scaling.py gathers speedup, efficiency and the combine step's share into
# results/<tag>/mpi_scaling.{json,md} and plots/mpi_scaling.png.
#   OUT=$OUT scripts/device/mpi_scaling.sh [--smoke] [NP ...]      (default NP: 1 2 4 8)
#   MPI_SCALING_CFGS="gp pitt vfdt gmt" (default) picks the workloads; runs already in the results
#   folder are kept (--resume), so a cut call continues where it stopped.
# Needs an MPI build (find_package(MPI): libopenmpi-dev, openmpi-bin) of run_experiment in $BUILD.
# As root: OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) are set here; oversubscription is allowed (a 2-core CI
# machine runs the smoke). Each step is bounded by what is left of the device call (common.sh).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. "$ROOT/scripts/device/common.sh"  # BUILD, GPUDM_DATA_DIR, call_timeout
SMOKE=()
if [ "${1:-}" = --smoke ]; then SMOKE=(--smoke); shift; fi
NPS=("${@:-1 2 4 8}")
read -r -a NPS <<<"${NPS[*]}"
RUN="$BUILD/experiments/run_experiment"
[ -x "$RUN" ] || RUN="$ROOT/build/experiments/run_experiment"
command -v mpirun >/dev/null || { echo "mpi_scaling: no mpirun here (install openmpi-bin)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
BASE="${MPI_SCALING_DIR:-$ROOT/results/$(results_tag)/mpi_scaling}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
status=0
for cfg in ${MPI_SCALING_CFGS:-gp pitt vfdt gmt}; do
  for mode in strong weak; do
    for np in "${NPS[@]}"; do
      c="$TMP/mpi_scaling_${cfg}.json"
      "$PY" - "configs/mpi_scaling_${cfg}.json" "$c" "$cfg" "$mode" "$np" <<'PYEOF'
import json, sys
src, dst, cfg, mode, np = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
c = json.load(open(src))
if mode == "weak":  # the problem grows with the ranks (the smoke block likewise, smaller)
    if cfg in ("gp", "pitt"):
        for d in c["datasets"]:
            d["options"]["rows"] = 128126 * np
        for d in c["smoke"]["datasets"]:
            d["options"]["rows"] = 2000 * np
    elif cfg == "gmt":
        c["params"]["population"] = 8 * np
        c["smoke"].setdefault("params", {})["population"] = 4 * np
    else:
        c["params"]["trees"] = 12 * np
        c["smoke"]["params"]["trees"] = 4 * np
json.dump(c, open(dst, "w"), indent=1)
PYEOF
      lim="$(call_timeout 560)"
      [ "$lim" = 0 ] && { echo "mpi_scaling: no time left in the device call for $cfg $mode np $np" >&2; status=1; continue; }
      out="$BASE/$mode/np$np"
      echo "[mpi_scaling] $cfg $mode np $np -> $out" >&2
      timeout "$lim" mpirun -np "$np" --bind-to core:overload-allowed "$RUN" "$c" "${SMOKE[@]}" -o "$out" -q --resume >"$TMP/log" 2>&1 ||
        { status=1; tail -5 "$TMP/log" >&2; }
    done
  done
done
"$PY" "$ROOT/scripts/mpi_scaling.py" "$BASE" ${SMOKE:+--smoke} || status=1
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  tar -czf "$OUT/mpi_scaling.tar.gz" -C "$ROOT" "$(realpath --relative-to="$ROOT" "$BASE")" \
    $(ls -d "$BASE"/../mpi_scaling.* "$BASE"/../plots/mpi_scaling.* 2>/dev/null | xargs -r -n1 realpath --relative-to="$ROOT") 2>/dev/null || true
fi
exit $status
