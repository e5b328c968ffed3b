#!/usr/bin/env bash
# Configures (once) and builds gpudm. Environment:
#   GPUDM_BUILD_DIR   build folder (default: build)
#   GPUDM_CUDA_ARCH   CUDA architectures (default: 90)
#   GPUDM_JOBS        parallel jobs (default: number of cores)
#   GPUDM_CMAKE_ARGS  extra configure arguments
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GPUDM_BUILD_DIR:-$ROOT/build}"
JOBS="${GPUDM_JOBS:-$(nproc)}"
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  mkdir -p "$BUILD"
  GEN=()
  command -v ninja >/dev/null && GEN=(-G Ninja)
  cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="${GPUDM_CUDA_ARCH:-90}" ${GPUDM_CMAKE_ARGS:-} >"$BUILD/configure.log" 2>&1 ||
    { cat "$BUILD/configure.log" >&2; exit 1; }
fi
cmake --build "$BUILD" -j "$JOBS" "$@"
# The project's venv imports gpudm from this build (scripts/python-env.sh made the venv; the default
# build folder only, so that other trees, e.g. the sanitizer one, never take it over).
VENV="${GPUDM_VENV:-$ROOT/.venv}"
if [ "$(realpath -m "$BUILD")" = "$(realpath -m "$ROOT/build")" ] && [ -x "$VENV/bin/python" ] && [ -d "$BUILD/python/gpudm" ]; then
  site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$BUILD/python" > "$site/gpudm-build.pth"
fi
