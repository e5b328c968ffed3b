#!/usr/bin/env bash
# Call C: GMT GPU tests and an A/B of GPUDM_GMT_MERGE_PREFETCH=1|0 on Armchair 10K, 1M, 10M.
set -u
mkdir -p logs
export GPUDM_GIT_SHA=483134f8be0f176f9e1ce84ac100ef835e0157e5 GPUDM_DATA_DIR=$PWD/datasets/cache DEVICE_CALL_LIMIT=590
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread
ROOT=$PWD; L=$ROOT/logs/merge_ab3; mkdir -p $L
. scripts/device/common.sh
T0=$(date +%s); st() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
GPUDM_BUILD_TARGETS="run_experiment gmt_cuda_tests" OUT=/tmp/o1 bash scripts/device/run_all.sh build > $L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
st built
[ -d "$ROOT/.deps/usr" ] && export LD_LIBRARY_PATH="$ROOT/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
timeout 100 build-device/tests/gmt/gmt_cuda_tests > $L/gmt_cuda_tests.log 2>&1; echo "gmt_cuda_tests rc=$?"; grep -E "^\[  (FAILED|PASSED)|Failure" $L/gmt_cuda_tests.log | head
st tests
for k in 1 2; do
  order="1 0"; [ $k = 2 ] && order="0 1"
  for set in a10k a1m a10m; do for v in $order; do
    case $set in a10k) args="--rows 10000 --param iterations=10000" ;; a1m) args="--rows 1000000 --param iterations=3000" ;; a10m) args="--rows 10000000 --param iterations=150" ;; esac
    left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 30 ] && { echo "skip $v $set $k"; continue; }
    GPUDM_GMT_MERGE_PREFETCH=$v timeout $left build-device/experiments/run_experiment --train gmt --dataset armchair $args --backend cuda --quiet --metrics-out $L/ab_${set}_p${v}_$k.json > $L/ab_${set}_p${v}_$k.log 2>&1 || echo "!! $v $set $k failed"
  done; done
  st "pair $k"
done
python3 - $L <<'PY'
import json, glob, os, sys, collections
L = sys.argv[1]; rows = collections.defaultdict(list)
for f in sorted(glob.glob(os.path.join(L, "ab_*.json"))):
    s, v, k = os.path.basename(f)[3:-5].rsplit("_", 2)
    d = json.load(open(f)); b = d["breakdown"]; it = d["iterations"]
    rows[(s, v)].append((1e3 * b["calc_models"]["seconds"] / it, d["induction_seconds"], d["fitness"], d["leaves"]))
for (s, v), r in sorted(rows.items()):
    print(f"{s:8s} {v:5s} calc_models ms/it " + " ".join(f"{x[0]:.4f}" for x in r) + "  run s " + " ".join(f"{x[1]:.2f}" for x in r) + f"  fitness {r[0][2]!r} leaves {r[0][3]}")
PY
tar czf $OUT/all.tar.gz logs
