#!/usr/bin/env bash
# Two commits measured on one lease: a config's runs built from the tree (HEAD) and from a base
# commit, whole runs interleaved round by round, then `run_experiment --compare` (medians, ratio,
# Mann-Whitney U per run). Leases of one machine kind differ by up to 1.8x in CPU speed, and a lease
# can slow down within a call, so a code change is judged on one lease in alternating rounds, never
# from two tables measured on two leases.
#
# Here, before the device call:
#   scripts/device/ab_commits.sh pack BASE_REV     the base commit's tree (results/ left out) into
#                                                  .ab/base.tar.gz; carry ".ab" (with .deps.tar.xz and
#                                                  datasets/cache) in the device call
# On the machine:
#   OUT=$OUT scripts/device/ab_commits.sh run CONFIG [run_experiment args...]
#     builds run_experiment from the tree (BUILD, default build-device) and from the base (beside it,
#     /tmp/ab-base), then AB_ROUNDS (default 3) rounds of (tree, base) runs of CONFIG with the args
#     given (e.g. -b openmp --only-dataset iris); each side's rounds pooled into one file (a run's
#     samples of every round), compared base -> tree into $OUT/ab/compare.md; every file of the
#     rounds packed into $OUT/ab.tar.gz. Prints the builds' and rounds' times and a host check.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
case "${1:-}" in
  pack)
    [ $# -eq 2 ] || { echo "usage: scripts/device/ab_commits.sh pack BASE_REV" >&2; exit 2; }
    rev="$(git rev-parse --verify "$2^{commit}")" || exit 2
    mkdir -p .ab
    git archive --format=tar "$rev" -- . ':!results' | gzip >.ab/base.tar.gz
    echo "$rev" >.ab/base.rev
    echo "ab_commits: .ab/base.tar.gz = $rev ($(du -h .ab/base.tar.gz | cut -f1)); carry \".ab\" in the device call"
    exit 0 ;;
  run) shift ;;
  *) echo "usage: scripts/device/ab_commits.sh pack BASE_REV | run CONFIG [run_experiment args...]" >&2; exit 2 ;;
esac
[ $# -ge 1 ] || { echo "usage: scripts/device/ab_commits.sh run CONFIG [run_experiment args...]" >&2; exit 2; }
[ -f .ab/base.tar.gz ] || { echo "ab_commits: no .ab/base.tar.gz (run 'ab_commits.sh pack BASE_REV' here and carry .ab)" >&2; exit 2; }
. "$ROOT/scripts/device/common.sh"  # BUILD, GPUDM_DATA_DIR, host_check
config="$1"; shift
case "$config" in /*) ;; *) config="$ROOT/$config" ;; esac
OUT="${OUT:-$ROOT/out}"
AB="$OUT/ab"
BASE="${AB_BASE_DIR:-/tmp/ab-base}"
ROUNDS="${AB_ROUNDS:-3}"
mkdir -p "$AB"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-16}" OMP_PROC_BIND="${OMP_PROC_BIND:-spread}"
pack() { tar -czf "$OUT/ab.tar.gz" -C "$OUT" ab 2>/dev/null; }
trap pack EXIT

build() {  # build TREE BUILD_DIR LOG
  (cd "$1" && BUILD="$2" OUT="$(mktemp -d)" GPUDM_BUILD_TARGETS=run_experiment bash scripts/device/run_all.sh build) >"$3" 2>&1 ||
    { tail -20 "$3"; echo "ab_commits: the build in $1 failed ($3)" >&2; exit 1; }
}
# (named by GPUDM_GIT_SHA: the device copy's git metadata can name an older commit than its tree)
stamp "build the tree (${GPUDM_GIT_SHA:-GPUDM_GIT_SHA unset}, as carried)"
build "$ROOT" "$BUILD" "$AB/build_tree.log"
stamp "build the base ($(cat .ab/base.rev 2>/dev/null | cut -c1-7))"
# (kept while the machine is warm: a second call on the same base rebuilds nothing)
if ! cmp -s .ab/base.rev "$BASE/.ab-rev"; then
  rm -rf "$BASE" && mkdir -p "$BASE" && tar -xzf .ab/base.tar.gz -C "$BASE" && cp .ab/base.rev "$BASE/.ab-rev"
fi
# the base builds and reads with the tree's staged dependencies and dataset cache
[ -d "$ROOT/.deps" ] && ln -sfn "$ROOT/.deps" "$BASE/.deps"
[ -d "$ROOT/datasets/cache" ] && mkdir -p "$BASE/datasets" && ln -sfn "$ROOT/datasets/cache" "$BASE/datasets/cache"
build "$BASE" "$BASE/build-ab" "$AB/build_base.log"
[ -d "$ROOT/.deps/usr" ] && export LD_LIBRARY_PATH="$ROOT/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
stamp "$(host_check)"
for i in $(seq 1 "$ROUNDS"); do
  for side in tree base; do
    # (the base tree has no git metadata: its runs name the packed commit)
    if [ "$side" = tree ]; then bin="$BUILD/experiments/run_experiment"; sha="${GPUDM_GIT_SHA:-}"
    else bin="$BASE/build-ab/experiments/run_experiment"; sha="$(cat .ab/base.rev)"; fi
    s=$(date +%s%N)
    GPUDM_GIT_SHA="$sha" "$bin" "$config" "$@" -q -o "$AB/$side$i" >/dev/null 2>"$AB/$side$i.err" ||
      { tail -5 "$AB/$side$i.err"; echo "ab_commits: $side round $i failed" >&2; exit 1; }
    stamp "$side round $i: $(( ($(date +%s%N) - s) / 1000000 )) ms"
  done
done
stamp "$(host_check)"
python3 - "$AB" "$ROUNDS" <<'PYEOF'
# Each side's rounds pooled into one results file: a run's samples of every round, its median,
# min and max recomputed; runs matched by position (one config, one build each: the same order).
import glob, json, os, statistics, sys
ab, rounds = sys.argv[1], int(sys.argv[2])
for side in ("tree", "base"):
    files = [glob.glob(os.path.join(ab, f"{side}{i}", "*.json")) for i in range(1, rounds + 1)]
    docs = [json.load(open(f[0])) for f in files]
    out = docs[0]
    for doc in docs[1:]:
        for a, b in zip(out["runs"], doc["runs"]):
            if (a["backend"], a["dataset"]["name"], a["params"]) != (b["backend"], b["dataset"]["name"], b["params"]):
                sys.exit(f"ab_commits: the rounds of {side} ran different runs")
            if a.get("status") == "ok" and b.get("status") == "ok":
                a["timing"]["samples"] += b["timing"]["samples"]
    for r in out["runs"]:
        if r.get("status") == "ok":
            s = r["timing"]["samples"]
            r["timing"].update(median=statistics.median(s), min=min(s), max=max(s), repetitions=len(s))
    json.dump(out, open(os.path.join(ab, f"{side}.json"), "w"), indent=1)
PYEOF
[ $? -eq 0 ] || exit 1
"$BUILD/experiments/run_experiment" --compare "$AB/base.json" "$AB/tree.json" >"$AB/compare.md" 2>&1
rc=$?
stamp "compare (base -> tree): $AB/compare.md (status $rc)"
head -60 "$AB/compare.md"
exit 0
