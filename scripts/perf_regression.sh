#!/usr/bin/env bash
# Performance regression check of the working tree against a git ref, on this machine:
#   scripts/perf_regression.sh REF            e.g. origin/main, HEAD~1, a tag
# Builds REF in a temporary git worktree and the working tree (Release, gpudm_bench only),
# runs both benchmark sets here with repetitions, then scripts/perf_gate.py BASE NEW (exit 1 on
# a significant regression of a median beyond the threshold).
# Environment:
#   GPUDM_BENCH_FILTER   benchmarks to run (default '/small/': the small size of every case)
#   GPUDM_BENCH_REPS     repetitions (default 9: the U test needs at least 9)
#   GPUDM_BENCH_MIN_TIME measured seconds per repetition (default 0.1)
#   GPUDM_PERF_THRESHOLD relative slowdown that fails (default 0.15)
#   GPUDM_PERF_DIR       where builds and JSON go (default build-perf/ in the working tree)
#   GPUDM_JOBS           build jobs (default: number of cores)
#   GPUDM_CMAKE_ARGS     extra configure arguments (e.g. -DCMAKE_CUDA_ARCHITECTURES=90)
set -euo pipefail
REF="${1:?usage: scripts/perf_regression.sh REF}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${GPUDM_PERF_DIR:-$ROOT/build-perf}"
FILTER="${GPUDM_BENCH_FILTER:-/small/}"
REPS="${GPUDM_BENCH_REPS:-9}"
JOBS="${GPUDM_JOBS:-$(nproc)}"
PY=/usr/bin/python3
[ -x "${GPUDM_PYTHON:-}" ] && PY="$GPUDM_PYTHON"
[ -x "$PY" ] || PY=python3

SHA="$(git -C "$ROOT" rev-parse --verify "$REF^{commit}")" || { echo "perf_regression: unknown ref '$REF'" >&2; exit 2; }
mkdir -p "$DIR"
WT="$(mktemp -d "$DIR/ref-XXXXXX")"
cleanup() { git -C "$ROOT" worktree remove --force "$WT" >/dev/null 2>&1 || rm -rf "$WT"; }
trap cleanup EXIT
git -C "$ROOT" worktree add --detach "$WT" "$SHA" >/dev/null
if [ ! -f "$WT/experiments/bench/CMakeLists.txt" ]; then
  echo "perf_regression: $REF ($SHA) has no experiments/bench: nothing to compare against" >&2
  exit 2
fi

build() {  # $1 source, $2 build dir
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  if [ ! -f "$2/CMakeCache.txt" ]; then
    cmake -S "$1" -B "$2" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DGPUDM_BUILD_TESTS=OFF -DGPUDM_BUILD_BENCH=ON \
      ${GPUDM_CMAKE_ARGS:-} >"$2.configure.log" 2>&1 || { cat "$2.configure.log" >&2; exit 2; }
  fi
  cmake --build "$2" --target gpudm_bench -j "$JOBS" >"$2.build.log" 2>&1 || { tail -40 "$2.build.log" >&2; exit 2; }
}
echo "== building $REF ($SHA) and the working tree"
mkdir -p "$DIR/build-ref" "$DIR/build-new"
build "$WT" "$DIR/build-ref"
build "$ROOT" "$DIR/build-new"

run() {  # $1 build dir, $2 output json
  "$1/experiments/bench/gpudm_bench" --benchmark_filter="$FILTER" --benchmark_repetitions="$REPS" \
    --benchmark_min_time="${GPUDM_BENCH_MIN_TIME:-0.1}" \
    --benchmark_display_aggregates_only=true --benchmark_out="$2" --benchmark_out_format=json
}
echo "== benchmarks ($FILTER, $REPS repetitions): base"
run "$DIR/build-ref" "$DIR/base.json"
echo "== benchmarks: new"
run "$DIR/build-new" "$DIR/new.json"
echo "== gate"
"$PY" "$ROOT/scripts/perf_gate.py" "$DIR/base.json" "$DIR/new.json" --threshold "${GPUDM_PERF_THRESHOLD:-0.15}" \
  --report "$DIR/gate.json"
