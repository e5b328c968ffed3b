#!/usr/bin/env bash
# Everything the GPU machine runs, in one command (the lead calls it through the device tool):
#   scripts/device/run_all.sh [build|test|areas|all]     (default: all)
#   OUT=$OUT scripts/device/run_all.sh                      results + logs -> $OUT/results.tar.gz
# Dependencies: the GPU image has nvcc, CMake and ninja but no Debian -dev packages; run
# scripts/device/stage_deps.sh here first and name ".deps.tar.xz" (or ".deps") in the device call's carry list.
# Stages:
#   build  configure (-DCMAKE_CUDA_ARCHITECTURES=90, Release) and build everything into build-device
#   test   ctest -L gpu, then ctest -L unit (-LE slow), logs in logs/
#   areas  every scripts/device/<area>.sh (ceilings first; each under its own time limit), which
#          write results/<gpu-tag>/... in the tree and their logs under logs/<area>/
# The stages can be split across calls (build-device stays while the machine is warm); every
# stage ends by packing results/ and logs/ into $OUT/results.tar.gz (the device tool returns at
# most 8 files). Keep the whole under the 10-minute command limit: GPUDM_AREA_TIMEOUT (s, default
# 240) bounds each area script, GPUDM_AREAS (space-separated) picks the areas, GPUDM_BUILD_TARGETS
# (space-separated, default: all) the targets the build stage builds (e.g. "run_experiment
# test_vfdt_equivalence test_vfdt_math test_vfdt_tree" for a vfdt-only call).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
. "$ROOT/scripts/device/common.sh"  # BUILD, GPUDM_DATA_DIR
cd "$ROOT"
STAGE="${1:-all}"
OUT="${OUT:-$ROOT/out}"
LOGS="$ROOT/logs"
JOBS="${GPUDM_JOBS:-$(nproc)}"
mkdir -p "$OUT" "$LOGS"
# Build dependencies staged by scripts/device/stage_deps.sh (carried as .deps): the GPU image has
# nvcc, CMake and ninja but not the Debian -dev packages.
DEPS_ARGS=()
if [ -d "$ROOT/.deps/usr" ]; then
  D="$ROOT/.deps/usr"
  export CMAKE_PREFIX_PATH="$D:$D/lib/x86_64-linux-gnu/cmake:$D/share/cmake:$D/share/eigen3/cmake${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$D/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  DEPS_ARGS=(-DCMAKE_BUILD_RPATH="$D/lib/x86_64-linux-gnu" -DZLIB_ROOT="$D")
fi
T0=$(date +%s)
status=0
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*"; }

pack() {
  {
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv 2>&1 || true
    nproc
  } >"$LOGS/machine.txt"
  tar -czf "$OUT/results.tar.gz" results logs 2>/dev/null || tar -czf "$OUT/results.tar.gz" logs
  stamp "packed $OUT/results.tar.gz ($(du -h "$OUT/results.tar.gz" | cut -f1))"
}
trap pack EXIT

if [ "$STAGE" = build ] || [ "$STAGE" = all ]; then
  stamp "== build ($JOBS jobs) into $BUILD"
  GEN=()
  command -v ninja >/dev/null && GEN=(-G Ninja)
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    # The tables' binaries without the Python module (position-independent code: GMT's host steps
    # +3 % in the CPU perf gate), as every GPU table was measured; a call for the Python package's
    # GPU tests passes GPUDM_CMAKE_ARGS=-DGPUDM_BUILD_PYTHON=ON with its own BUILD.
    if ! cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DGPUDM_BUILD_PYTHON=OFF "${DEPS_ARGS[@]}" ${GPUDM_CMAKE_ARGS:-} >"$LOGS/configure.log" 2>&1; then
      tail -30 "$LOGS/configure.log"
      [ -d "$ROOT/.deps" ] || echo "run_all: missing packages? run scripts/device/stage_deps.sh here and carry .deps"
      rm -f "$BUILD/CMakeCache.txt"
      exit 1
    fi
  fi
  # -k 0: one family's broken target must not hide every other area's results.
  KEEP_GOING=()
  grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja' "$BUILD/CMakeCache.txt" && KEEP_GOING=(-- -k 0)
  TARGETS=()
  for t in ${GPUDM_BUILD_TARGETS:-}; do TARGETS+=(--target "$t"); done
  if ! cmake --build "$BUILD" -j "$JOBS" "${TARGETS[@]}" "${KEEP_GOING[@]}" >"$LOGS/build.log" 2>&1; then
    status=1
    grep -E "error|FAILED" "$LOGS/build.log" | head -40
  fi
  stamp "build done (status $status)"
fi

if [ "$STAGE" = test ] || [ "$STAGE" = all ]; then
  stamp "== ctest -L gpu"
  (cd "$BUILD" && timeout 420 ctest -L gpu --output-on-failure -j 4 --timeout 300) >"$LOGS/ctest_gpu.log" 2>&1 || status=1
  tail -25 "$LOGS/ctest_gpu.log"
  stamp "== ctest -L unit -LE slow"
  (cd "$BUILD" && timeout 300 ctest -L unit -LE slow --output-on-failure -j "$JOBS" --timeout 240) >"$LOGS/ctest_unit.log" 2>&1 || status=1
  tail -15 "$LOGS/ctest_unit.log"
fi

if [ "$STAGE" = areas ] || [ "$STAGE" = all ]; then
  AREAS="${GPUDM_AREAS:-}"
  if [ -z "$AREAS" ]; then
    AREAS="ceilings"
    for s in scripts/device/*.sh; do
      a="$(basename "$s" .sh)"
      # sanitize is slow and run on demand (GPUDM_AREAS=sanitize)
      [ "$a" = run_all ] || [ "$a" = ceilings ] || [ "$a" = sanitize ] || AREAS="$AREAS $a"
    done
  fi
  for a in $AREAS; do
    s="scripts/device/$a.sh"
    [ -x "$s" ] || [ -f "$s" ] || { echo "no $s"; continue; }
    stamp "== area $a"
    mkdir -p "$LOGS/$a"
    BUILD="$BUILD" OUT_DIR="$LOGS/$a" timeout "${GPUDM_AREA_TIMEOUT:-240}" bash "$s" >"$LOGS/$a/run.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || status=1
    tail -20 "$LOGS/$a/run.log"
    stamp "area $a exit $rc"
  done
fi
stamp "run_all: status $status"
exit $status
