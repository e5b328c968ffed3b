#!/usr/bin/env bash
# The MPI scaling experiment: configs/mpi_scaling_{gp,pitt,vfdt,gmt,gmtrows,gmt10m}.json under mpirun with
# 1, 2, 4 and 8 ranks (one core each), strong (the config's problem) and weak scaling (GP and
# Pittsburgh: 128,126 Poker rows per rank; the forest: 12 trees per rank; GMT split by individuals:
# 8 individuals per rank; GMT split by rows: 131,072 Armchair rows per rank), then
# scripts/mpi_scaling.py gathers speedup, efficiency and the combine step's share into
# results/<tag>/mpi_scaling.{json,md} and plots/mpi_scaling.png.
#   OUT=$OUT scripts/device/mpi_scaling.sh [--smoke] [NP ...]      (default NP: 1 2 4 8)
#   MPI_SCALING_CFGS="gp pitt vfdt gmt gmtrows" (default; on GPUs "gp pitt gmt vfdt gmt10m gmtrows gmt10mrows") picks the workloads; runs already in the results
#   folder are kept (--resume), so a cut call continues where it stopped.
#   MPI_TESTS=1 / only: build and run the mpi tests here first (or only those).
#   MPI_SCALING_DEVICE=cuda: ranks = GPUs (GPUDM_GPU_PER_RANK=1: local rank r uses GPU r), default NP
#   1 2 4 up to the GPUs present, results in results/<tag>/mpi_scaling_gpu; the workloads that split
#   on a GPU: GP (the CUDA rule engine on each rank's rows; strong 4,100,040 Poker rows, weak
#   1,025,010 a rank, 100 generations) and GMT (the CUDA fast path on each rank's block of
#   individuals; Armchair 1M, 2,000 iterations, population 64, weak 64 a rank; gmt10m: Armchair 10M,
#   200 iterations, GPU runs only by default; gmtrows / gmt10mrows on GPUs: the same problems with the
#   rows split, each GPU a block of whole merge groups, weak 1,000,000 / 2,500,000 rows a GPU) and Pittsburgh (the
#   CUDA backend on each rank's rows, RowShardedEvaluator; Poker rows as GP's, population 50).
#   and the forest (the CUDA backend, persistent engine, on each rank's block of trees over the whole
#   RT stream: strong 96 trees, weak 96 a rank, 2,000,000 rows; per-class votes summed per call).
# Needs an MPI build (find_package(MPI): libopenmpi-dev, openmpi-bin) of run_experiment in $BUILD.
# As root: OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) are set here; oversubscription is allowed (a 2-core CI
# machine runs the smoke). Each step is bounded by what is left of the device call (common.sh).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. "$ROOT/scripts/device/common.sh"  # BUILD, GPUDM_DATA_DIR, call_timeout
# MPI_TESTS=1: first build run_experiment and test_mpi_rules and run ctest -L mpi here (the mpi tests
# with the GPU present: Pittsburgh's CUDA backend on each rank's rows); MPI_TESTS=only: just that.
if [ -n "${MPI_TESTS:-}" ]; then
  LOGS="${OUT:-$ROOT/logs}/mpi_tests"; mkdir -p "$LOGS"
  GPUDM_BUILD_TARGETS="run_experiment test_mpi_rules" OUT="$LOGS" bash "$ROOT/scripts/device/run_all.sh" build >"$LOGS/build.log" 2>&1 ||
    { tail -30 "$LOGS/build.log"; exit 1; }
  (cd "$BUILD" && ctest -L mpi --output-on-failure) >"$LOGS/ctest_mpi.log" 2>&1; rc=$?
  tail -15 "$LOGS/ctest_mpi.log"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    mpirun -np 2 "$BUILD/tests/mpi/test_mpi_rules" --gtest_filter='MpiPittsburgh.*' >"$LOGS/pittsburgh_np2.log" 2>&1
  grep -E "OK|FAILED|SKIPPED|PASSED" "$LOGS/pittsburgh_np2.log" | head -10
  [ "$MPI_TESTS" = only ] && exit $rc
fi
SMOKE=()
if [ "${1:-}" = --smoke ]; then SMOKE=(--smoke); shift; fi
DEVICE="${MPI_SCALING_DEVICE:-cpu}"
if [ "$DEVICE" = cuda ]; then
  GPUS="$(gpu_count)"
  DEF=""; for n in 1 2 4 8; do [ "$n" -le "${GPUS:-0}" ] && DEF="$DEF $n"; done
  NPS=("${@:-$DEF}")
  export GPUDM_GPU_PER_RANK=1
else
  NPS=("${@:-1 2 4 8}")
fi
read -r -a NPS <<<"${NPS[*]}"
RUN="$BUILD/experiments/run_experiment"
[ -x "$RUN" ] || RUN="$ROOT/build/experiments/run_experiment"
command -v mpirun >/dev/null || { echo "mpi_scaling: no mpirun here (install openmpi-bin)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
SUFFIX=""; [ "$DEVICE" = cuda ] && SUFFIX=_gpu
BASE="${MPI_SCALING_DIR:-$ROOT/results/$(results_tag)/mpi_scaling$SUFFIX}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
status=0
DEFAULT_CFGS="gp pitt vfdt gmt gmtrows"; [ "$DEVICE" = cuda ] && DEFAULT_CFGS="gp pitt gmt vfdt gmt10m gmtrows gmt10mrows"
for cfg in ${MPI_SCALING_CFGS:-$DEFAULT_CFGS}; do
  for mode in strong weak; do
    for np in "${NPS[@]}"; do
      c="$TMP/mpi_scaling_${cfg}.json"
      "$PY" - "configs/mpi_scaling_${cfg}.json" "$c" "$cfg" "$mode" "$np" "$DEVICE" <<'PYEOF'
import json, sys
src, dst, cfg, mode, np, device = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
c = json.load(open(src))
if device == "cuda":  # ranks = GPUs: the CUDA backend, a problem that keeps a GPU busy
    c["experiment"] += "_gpu"
    c["title"] += " (ranks = GPUs)"
    if cfg in ("gp", "pitt"):
        c["cases"] = [{"backend": "cuda"}]
        if cfg == "gp":
            c["params"]["generations"] = 100
        for d in c["datasets"]:
            d["options"]["rows"] = 1025010 * np if mode == "weak" else 4100040
    elif cfg in ("gmt", "gmt10m"):
        c["cases"] = [{"backend": "cuda", "params": {"gpu_path": "fast"}}]
        c["params"]["iterations"] = 2000 if cfg == "gmt" else 200
        if mode == "weak":
            c["params"]["population"] = 64 * np
    elif cfg in ("gmtrows", "gmt10mrows"):  # the CUDA fast path's rows split (each GPU a block of whole merge groups)
        c["cases"] = [{"backend": "cuda", "params": {"gpu_path": "fast"}}]
        c["params"]["iterations"] = 2000 if cfg == "gmtrows" else 200
        c["params"]["rank_split"] = "rows"
        if mode == "weak":
            c["datasets"] = [{"name": "armchair", "options": {"rows": (1000000 if cfg == "gmtrows" else 2500000) * np}}]
    elif cfg == "vfdt":
        c["cases"] = [{"backend": "cuda"}]
        c["params"]["trees"] = 96 * np if mode == "weak" else 96
        for d in c["datasets"]:
            d["options"]["rows"] = 2000000
elif mode == "weak":  # the problem grows with the ranks (the smoke block likewise, smaller)
    if cfg in ("gp", "pitt"):
        for d in c["datasets"]:
            d["options"]["rows"] = 128126 * np
        for d in c["smoke"]["datasets"]:
            d["options"]["rows"] = 2000 * np
    elif cfg in ("gmt", "gmt10m"):
        c["params"]["population"] = 8 * np
        c["smoke"].setdefault("params", {})["population"] = 4 * np
    elif cfg == "gmtrows":  # 8 row chunks of 16,384 a rank
        c["datasets"] = [{"name": "armchair", "options": {"rows": 131072 * np}}]
        for d in c["smoke"]["datasets"]:
            d["options"]["rows"] = 5000 * np
    else:
        c["params"]["trees"] = 12 * np
        c["smoke"]["params"]["trees"] = 4 * np
json.dump(c, open(dst, "w"), indent=1)
PYEOF
      lim="$(call_timeout 560)"
      [ "$lim" = 0 ] && { echo "mpi_scaling: no time left in the device call for $cfg $mode np $np" >&2; status=1; continue; }
      out="$BASE/$mode/np$np"
      BIND=(--bind-to core:overload-allowed); [ "$DEVICE" = cuda ] && BIND=(--bind-to none)
      echo "[mpi_scaling] $cfg $mode np $np -> $out" >&2
      timeout "$lim" mpirun -np "$np" "${BIND[@]}" "$RUN" "$c" "${SMOKE[@]}" -o "$out" -q --resume >"$TMP/log" 2>&1 ||
        { status=1; tail -5 "$TMP/log" >&2; }
    done
  done
done
"$PY" "$ROOT/scripts/mpi_scaling.py" "$BASE" ${SMOKE:+--smoke} || status=1
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  tar -czf "$OUT/mpi_scaling$SUFFIX.tar.gz" -C "$ROOT" "$(realpath --relative-to="$ROOT" "$BASE")" \
    $(ls -d "$BASE".* "$BASE"/../plots/"$(basename "$BASE")".* 2>/dev/null | xargs -r -n1 realpath --relative-to="$ROOT") 2>/dev/null || true
fi
exit $status
