#!/usr/bin/env bash
# Configures a build folder once (nothing when it has a CMakeCache.txt): Ninja and ccache when
# present, the log in BUILD/configure.log (printed on failure).
#   scripts/configure-once.sh BUILD [cmake arguments...]      e.g. --preset asan, -DGPUDM_FUZZ=ON
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$1"
shift
[ -f "$BUILD/CMakeCache.txt" ] && exit 0
mkdir -p "$BUILD"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
LAUNCH=()
command -v ccache >/dev/null && LAUNCH=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# From the source folder: a --preset is looked up there.
(cd "$ROOT" && cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" "${LAUNCH[@]}" "$@" ${GPUDM_CMAKE_ARGS:-}) >"$BUILD/configure.log" 2>&1 ||
  { cat "$BUILD/configure.log" >&2; rm -f "$BUILD/CMakeCache.txt"; exit 1; }
