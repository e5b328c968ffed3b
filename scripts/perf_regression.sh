#!/usr/bin/env bash
# CPU performance gate: the working tree against a base commit, on this machine.
#   scripts/perf_regression.sh [REF]     REF: a commit, branch or tag (default: chosen, see below)
# Builds the base (git archive into build-perf/base-src) and the working tree, Release, gpudm_bench
# only, CUDA off (the gate runs CPU cases), in separate build dirs laid out alike (ccache, used when
# installed, shares what the two trees compile identically; unity batches name their files by
# absolute path, so across the two trees that is little, and each build is a unity build). Runs the CPU cases of every
# family but ceilings (*/small/sequential and */small/openmp: one OpenMP thread) interleaved, one
# gpudm_bench process per case and sample: base new new base base new ... (so drift of a shared
# machine hits both sides alike; a sample is the fastest of 3 timed repetitions), GPUDM_PERF_REPS
# samples each, then scripts/perf_gate.py (run_experiment --compare): a case fails when its median
# is slower by more than the threshold with p < 0.05. A
# failure counts only if a second interleaved round of the failing cases confirms it. Before the
# rounds every case runs once per side: a case that fails in the new build fails the gate; one that
# fails only in the base is left out, with a line saying so.
#
# Base, when REF is not given (docs/perf-regression.md says why):
#   $GPUDM_PERF_BASE if set; else the merge-base of HEAD with main (origin/main) when HEAD is not on
#   main: the commit the branch grew from, which passed CI to be on main; else the newest
#   first-parent ancestor committed at least 3 hours before HEAD (time for its own CI to have run).
# A base without the family benchmark cases (older than the gate), or no base at all: the gate is
# skipped with a line saying so, exit 0.
#
# Environment:
#   GPUDM_PERF_REPS       samples per side and round (default 9: the U test's usual minimum)
#   GPUDM_PERF_THRESHOLD  relative slowdown of the median that fails (default 0.10)
#   GPUDM_PERF_PER_SAMPLE timed repetitions per sample process, the fastest counts (default 3)
#   GPUDM_PERF_FILTER     extra regex the case names must match (default: all CPU cases)
#   GPUDM_PERF_DIR        builds and JSON (default build-perf/ in the working tree)
#   GPUDM_JOBS            build jobs (default: number of cores)
#   GPUDM_CMAKE_ARGS      extra configure arguments for both builds
#   GPUDM_PERF_LOCK       a lock file (flock) to hold during each of the two builds, not the rounds
#   GPUDM_PERF_NEW_BUILD  an existing Release build folder of the working tree whose gpudm_bench is
#                         the new side (brought up to date), instead of a second cold build (CI)
# Exit status: 0 pass or skipped, 1 a confirmed regression, 2 a build or usage error.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${GPUDM_PERF_DIR:-$ROOT/build-perf}"
REPS="${GPUDM_PERF_REPS:-9}"
THRESHOLD="${GPUDM_PERF_THRESHOLD:-0.10}"
# A sample is one process: warm-up, then PER timed repetitions, of which the fastest counts (load
# from other jobs only ever adds time; the fastest of a few is the least disturbed).
PER="${GPUDM_PERF_PER_SAMPLE:-3}"
JOBS="${GPUDM_JOBS:-$(nproc)}"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
say() { echo "perf gate: $*"; }

# ---- the base ------------------------------------------------------------------------------
REF="${1:-${GPUDM_PERF_BASE:-}}"
if [ -n "$REF" ]; then
  BASE="$(git -C "$ROOT" rev-parse --verify -q "$REF^{commit}")" || { echo "perf_regression: unknown ref '$REF'" >&2; exit 2; }
  WHY="given ($REF)"
else
  HEAD_SHA="$(git -C "$ROOT" rev-parse HEAD)"
  BASE="" WHY=""
  for m in origin/main main; do
    if git -C "$ROOT" rev-parse -q --verify "$m^{commit}" >/dev/null; then
      mb="$(git -C "$ROOT" merge-base HEAD "$m" 2>/dev/null || true)"
      if [ -n "$mb" ] && [ "$mb" != "$HEAD_SHA" ]; then BASE="$mb" WHY="merge-base of HEAD and $m"; fi
      break
    fi
  done
  if [ -z "$BASE" ]; then
    t="$(git -C "$ROOT" log -1 --format=%ct HEAD)"
    BASE="$(git -C "$ROOT" rev-list --first-parent -n 1 --before="$((t - 3 * 3600))" HEAD 2>/dev/null || true)"
    WHY="newest first-parent ancestor committed >= 3 h before HEAD"
  fi
  if [ -z "$BASE" ]; then
    say "skipped: no base commit (no main to branch from and no ancestor 3 h older than HEAD; shallow clone?)"
    exit 0
  fi
fi
say "base $(git -C "$ROOT" log -1 --format='%h %cd %s' --date=format:'%Y-%m-%d %H:%M' "$BASE" | cut -c1-110) [$WHY]"
if ! git -C "$ROOT" ls-tree --name-only "$BASE" experiments/bench/ 2>/dev/null | grep -E '\.cpp$' |
     grep -v -E '/(bench_main|ceilings)\.cpp$' >/dev/null; then
  say "skipped: base $(git -C "$ROOT" rev-parse --short "$BASE") predates the family benchmark cases (experiments/bench/<family>.cpp); nothing to compare against"
  exit 0
fi

# ---- builds ----------------------------------------------------------------------------------
# build-perf/new builds the working tree; build-perf/base-src/build-perf/new builds the base: the
# same path from build dir to sources, so ccache (paths relative to CCACHE_BASEDIR) hits across them.
mkdir -p "$DIR"
SRC_BASE="$DIR/base-src"
if [ "$(cat "$SRC_BASE/.gpudm-base-sha" 2>/dev/null || true)" != "$BASE" ]; then
  rm -rf "$SRC_BASE"
  mkdir -p "$SRC_BASE"
  git -C "$ROOT" archive "$BASE" | tar -x -C "$SRC_BASE"
  echo "$BASE" >"$SRC_BASE/.gpudm-base-sha"
fi
LAUNCH=()
if command -v ccache >/dev/null; then
  LAUNCH=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
fi
BUILD_S=0
build() {  # $1 source, $2 build dir
  local gen=() fd t0
  command -v ninja >/dev/null && gen=(-G Ninja)
  # A machine whose builds share a lock (GPUDM_PERF_LOCK): held for each build only, not the rounds.
  if [ -n "${GPUDM_PERF_LOCK:-}" ]; then exec {fd}>>"$GPUDM_PERF_LOCK"; flock "$fd"; fi
  t0=$SECONDS
  if [ ! -f "$2/CMakeCache.txt" ]; then
    mkdir -p "$2"
    cmake -S "$1" -B "$2" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DGPUDM_ENABLE_CUDA=OFF -DGPUDM_BUILD_TESTS=OFF \
      -DGPUDM_BUILD_BENCH=ON "${LAUNCH[@]}" ${GPUDM_CMAKE_ARGS:-} >"$2/configure.log" 2>&1 ||
      { cat "$2/configure.log" >&2; exit 2; }
  fi
  cmake --build "$2" --target gpudm_bench -j "$JOBS" >"$2/build.log" 2>&1 || { tail -40 "$2/build.log" >&2; exit 2; }
  BUILD_S=$((BUILD_S + SECONDS - t0))
  if [ -n "${GPUDM_PERF_LOCK:-}" ]; then exec {fd}>&-; fi
}
start=$SECONDS
build "$SRC_BASE" "$SRC_BASE/build-perf/new"
BIN_BASE="$SRC_BASE/build-perf/new/experiments/bench/gpudm_bench"
if [ -n "${GPUDM_PERF_NEW_BUILD:-}" ]; then
  # The working tree's Release build that already exists (CI: the one scripts/test.sh built, CUDA
  # on): its gpudm_bench runs the same CPU code, compiled with the same flags, as a CUDA-off build
  # of the tree would; CUDA adds only the GPU backends it registers. Saves a cold build of the tree.
  [ "$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$GPUDM_PERF_NEW_BUILD/CMakeCache.txt" 2>/dev/null)" = Release ] ||
    { echo "perf_regression: GPUDM_PERF_NEW_BUILD=$GPUDM_PERF_NEW_BUILD is not a configured Release build" >&2; exit 2; }
  t0=$SECONDS
  cmake --build "$GPUDM_PERF_NEW_BUILD" --target gpudm_bench -j "$JOBS" >"$DIR/new-build.log" 2>&1 ||
    { tail -40 "$DIR/new-build.log" >&2; exit 2; }
  BUILD_S=$((BUILD_S + SECONDS - t0))
  BIN_NEW="$GPUDM_PERF_NEW_BUILD/experiments/bench/gpudm_bench"
  NEW_WHAT="new: $GPUDM_PERF_NEW_BUILD"
else
  build "$ROOT" "$DIR/new"
  BIN_NEW="$DIR/new/experiments/bench/gpudm_bench"
  NEW_WHAT="new"
fi
say "built base and $NEW_WHAT (Release, gpudm_bench) in $BUILD_S s$([ $((SECONDS - start)) -gt "$BUILD_S" ] &&
  echo " (+$((SECONDS - start - BUILD_S)) s waiting for ${GPUDM_PERF_LOCK:-the lock})")"

# ---- the cases: CPU (small) cases of every family but ceilings, present in both builds ----------
cases() {
  "$1" --benchmark_list_tests | grep -E '^[^/]+/[^/]+/small/(sequential|openmp)(/|$)' | grep -v '^ceilings/' |
    grep -E "${GPUDM_PERF_FILTER:-.}" | sort
}
CASES="$(comm -12 <(cases "$BIN_BASE") <(cases "$BIN_NEW"))"
if [ -z "$CASES" ]; then
  say "skipped: base and new have no CPU benchmark case in common"
  exit 0
fi
regex_of() { echo "^($(echo "$1" | sed 's/[][().*+?^$|\\]/\\&/g' | paste -sd '|'))\$"; }

# ---- every case once on each side: a case that fails in the new build fails the gate (it would
# otherwise only be "not compared"); one that fails in the base (fixed since) is left out.
failing() {  # $1 binary, $2 out json -> names of the cases that failed (not skipped), one a line
  "$1" --benchmark_filter="$(regex_of "$CASES")" --benchmark_min_time=0 --benchmark_out="$2" \
    --benchmark_out_format=json >/dev/null 2>&1 || true
  "$PY" -c 'import json,sys
try: d = json.load(open(sys.argv[1]))
except (OSError, ValueError): print("(all)\tno JSON written: gpudm_bench crashed?"); sys.exit()
for b in d.get("benchmarks", []):
    if b.get("error_occurred") and not b.get("error_message", "").startswith("skipped"):
        print(b["name"] + "\t" + b.get("error_message", ""))' "$2"
}
mkdir -p "$DIR/check"
BROKEN="$(failing "$BIN_NEW" "$DIR/check/new.json")"
if [ -n "$BROKEN" ]; then
  say "FAIL: benchmark case(s) fail in the new build (gpudm_bench --benchmark_filter=NAME):"
  echo "$BROKEN" | sed 's/^/  /'
  exit 1
fi
OLD_BROKEN="$(failing "$BIN_BASE" "$DIR/check/base.json" | cut -f1)"
if [ -n "$OLD_BROKEN" ]; then
  say "not compared (the case fails in the base): $(echo "$OLD_BROKEN" | paste -sd ' ')"
  CASES="$(comm -23 <(echo "$CASES") <(echo "$OLD_BROKEN" | sort))"
  [ -n "$CASES" ] || { say "skipped: every common CPU case fails in the base"; exit 0; }
fi

round() {  # $1 name, $2 case names (one a line) -> $DIR/$1/report.json; returns perf_gate's status
  local out="$DIR/$1" i k c order side bin
  local -a cs
  mapfile -t cs <<<"$2"
  rm -rf "$out"
  mkdir -p "$out"
  say "round '$1': ${#cs[@]} case(s), $REPS samples per side, interleaved case by case"
  # Sample i of case k: base then new, or new then base, alternating in i and k (base new new
  # base ...), one process each, so the two sides of a case are measured within a second of each
  # other and bursts of load on the shared machine fall on both alike.
  for ((i = 0; i < REPS; i++)); do
    for ((k = 0; k < ${#cs[@]}; k++)); do
      c="${cs[$k]}"
      if (((i + k) % 2 == 0)); then order="base new"; else order="new base"; fi
      for side in $order; do
        bin="$BIN_BASE"
        [ "$side" = new ] && bin="$BIN_NEW"
        "$bin" --benchmark_filter="$(regex_of "$c")" --benchmark_min_time=0 --benchmark_repetitions="$PER" \
          --benchmark_out="$out/${side}_${i}_$k.json" --benchmark_out_format=json >/dev/null 2>"$out/err.txt" ||
          { cat "$out/err.txt" >&2; exit 2; }
      done
    done
  done
  local rc=0
  "$PY" "$ROOT/scripts/perf_gate.py" --base "$out"/base_*.json --new "$out"/new_*.json --threshold "$THRESHOLD" \
    --min-repetitions "$REPS" --min-per-file --report "$out/report.json" || rc=$?
  return $rc
}
slower_in() {  # names of the cases a report calls slower
  "$PY" -c 'import json,sys; [print(r["label"]) for r in json.load(open(sys.argv[1]))["runs"] if r["verdict"] == "slower"]' "$1"
}

start=$SECONDS
rc=0
round first "$CASES" || rc=$?
if [ "$rc" = 1 ]; then
  SLOW="$(slower_in "$DIR/first/report.json")"
  say "$(echo "$SLOW" | wc -l) case(s) slower in the first round; confirming with a second interleaved round"
  rc=0
  round confirm "$SLOW" || rc=$?
  if [ "$rc" = 1 ]; then
    CONFIRMED="$(comm -12 <(echo "$SLOW" | sort) <(slower_in "$DIR/confirm/report.json" | sort))"
    if [ -n "$CONFIRMED" ]; then
      say "FAIL: regression confirmed by both rounds ($((SECONDS - start)) s): $(echo "$CONFIRMED" | paste -sd ' ')"
      exit 1
    fi
  fi
  [ "$rc" = 2 ] && { say "skipped: the confirmation round could not compare (above)"; exit 0; }
  say "PASS: the first round's slowdown was not confirmed ($((SECONDS - start)) s)"
  exit 0
fi
[ "$rc" = 2 ] && { say "skipped: the round could not compare (above)"; exit 0; }
say "PASS ($((SECONDS - start)) s)"
