#!/usr/bin/env bash
# Call A: GMT GPU tests with compute-sanitizer, mpi tests, and an A/B of HEAD's merge against 3781b5b's.
set -u
mkdir -p logs
export GPUDM_GIT_SHA=ca27fabce2374ff16aacc8832d30bb629fbc0639 GPUDM_DATA_DIR=$PWD/datasets/cache DEVICE_CALL_LIMIT=590
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread
ROOT=$PWD; L=$ROOT/logs/merge_ab2; mkdir -p $L
. scripts/device/common.sh
T0=$(date +%s); st() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
rm -rf /tmp/base; mkdir -p /tmp/base
tar -C $ROOT --exclude=./build-device --exclude=./.git --exclude=./results --exclude=./datasets/cache --exclude=./logs -cf - . | tar -C /tmp/base -xf -
cp .alloc/base/fused.cuh .alloc/base/fast.cu .alloc/base/paths.cuh /tmp/base/backends/cuda/gmt/
(cd /tmp/base && BUILD=/tmp/base/build-device GPUDM_BUILD_TARGETS=run_experiment GPUDM_JOBS=6 OUT=/tmp/o2 bash scripts/device/run_all.sh build > $L/build_base.log 2>&1) &
GMT_STAGES=tests OUT=/tmp/gmtout OUT_DIR=$PWD/logs/gmt_tests bash scripts/device/gmt.sh > logs/gmt_tests.log 2>&1
echo "gmt rc=$?"; grep -E "PASSED|FAILED|status|== |compute-sanitizer" logs/gmt_tests.log | head -30
st "gmt tests done"
MPI_TESTS=only OUT=$PWD/logs bash scripts/device/mpi_scaling.sh > logs/mpi.log 2>&1
echo "mpi rc=$?"; tail -12 logs/mpi.log
cp build-device/Testing/Temporary/LastTest.log logs/mpi_tests/LastTest.log 2>/dev/null
st "mpi done"
wait; st "base built"; tail -n 2 $L/build_base.log
[ -d "$ROOT/.deps/usr" ] && export LD_LIBRARY_PATH="$ROOT/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin() { case $1 in base) echo /tmp/base/build-device/experiments/run_experiment ;; *) echo $ROOT/build-device/experiments/run_experiment ;; esac; }
for k in 1 2; do
  order="base head"; [ $k = 2 ] && order="head base"
  for set in a10k a1m elnino; do for v in $order; do
    case $set in a10k) args="--dataset armchair --rows 10000 --param iterations=10000" ;; a1m) args="--dataset armchair --rows 1000000 --param iterations=3000" ;; *) args="--dataset $set --param iterations=10000" ;; esac
    left=$(( 570 - ($(date +%s) - T0) )); [ $left -lt 30 ] && { echo "skip $v $set $k"; continue; }
    timeout $left $(bin $v) --train gmt $args --backend cuda --quiet --metrics-out $L/ab_${set}_${v}_$k.json > $L/ab_${set}_${v}_$k.log 2>&1 || echo "!! $v $set $k failed"
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
tar czf $OUT/all.tar.gz --exclude='*.bin' logs
