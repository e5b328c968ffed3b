#!/usr/bin/env bash
# Call 1 (twentieth session): the merge change (HEAD, unroll 1) against 3781b5b's kernel (base) and
# HEAD with unroll 2 (u2); HEAD's GMT GPU tests; ncu of fused_merge_kernel; interleaved whole runs.
set -u
export GPUDM_GIT_SHA=8f72ea99e4f473bbb46a0e0534e3a7904d110e94 GPUDM_DATA_DIR=$PWD/datasets/cache DEVICE_CALL_LIMIT=590
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread
ROOT=$PWD
L=$ROOT/logs/merge_ab; mkdir -p $L
. scripts/device/common.sh
T0=$(date +%s)
st() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
for vn in base u2; do
  rm -rf /tmp/$vn; mkdir -p /tmp/$vn
  tar -C $ROOT --exclude=./build-device --exclude=./.git --exclude=./results --exclude=./datasets/cache --exclude=./logs -cf - . | tar -C /tmp/$vn -xf -
done
cp .alloc/base/fused.cuh .alloc/base/fast.cu .alloc/base/paths.cuh /tmp/base/backends/cuda/gmt/
sed -i 's/#define GPUDM_GMT_MERGE_UNROLL 1/#define GPUDM_GMT_MERGE_UNROLL 2/' /tmp/u2/backends/cuda/gmt/fused.cuh
grep -c "GPUDM_GMT_MERGE_UNROLL 2" /tmp/u2/backends/cuda/gmt/fused.cuh
(GPUDM_BUILD_TARGETS="run_experiment gmt_cuda_tests gmt_equivalence_tests" GPUDM_JOBS=6 OUT=/tmp/o1 bash scripts/device/run_all.sh build > $L/build_head.log 2>&1) &
(cd /tmp/base && BUILD=/tmp/base/build-device GPUDM_BUILD_TARGETS=run_experiment GPUDM_JOBS=5 OUT=/tmp/o2 bash scripts/device/run_all.sh build > $L/build_base.log 2>&1) &
(cd /tmp/u2 && BUILD=/tmp/u2/build-device GPUDM_BUILD_TARGETS=run_experiment GPUDM_JOBS=5 OUT=/tmp/o3 bash scripts/device/run_all.sh build > $L/build_u2.log 2>&1) &
wait
st "builds done"; tail -n 2 $L/build_head.log $L/build_base.log $L/build_u2.log
[ -d "$ROOT/.deps/usr" ] && export LD_LIBRARY_PATH="$ROOT/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $L/gpu.txt 2>&1
for t in gmt_cuda_tests gmt_equivalence_tests; do
  timeout 150 build-device/tests/gmt/$t > $L/$t.log 2>&1; echo "$t rc=$?"; grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure" $L/$t.log | head -20
done
st "tests done"
bin() { case $1 in base) echo /tmp/base/build-device/experiments/run_experiment ;; u2) echo /tmp/u2/build-device/experiments/run_experiment ;; *) echo $ROOT/build-device/experiments/run_experiment ;; esac; }
runone() {  # variant set k
  local v=$1 set=$2 k=$3 args env=()
  case $set in a10k) args="--dataset armchair --rows 10000 --param iterations=10000" ;; a1m) args="--dataset armchair --rows 1000000 --param iterations=3000" ;; *) args="--dataset $set --param iterations=10000" ;; esac
  [ $v = h128 ] && env=(GPUDM_GMT_MERGE_BLOCK=128)
  local left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 40 ] && { echo "skip $v $set $k"; return; }
  env "${env[@]}" timeout $left $(bin $v) --train gmt $args --backend cuda --quiet --metrics-out $L/ab_${set}_${v}_$k.json > $L/ab_${set}_${v}_$k.log 2>&1 || echo "!! $v $set $k failed"
}
for k in 1 2; do
  order="base head h128 u2"; [ $k = 2 ] && order="u2 h128 head base"
  for set in a10k a1m elnino; do for v in $order; do runone $v $set $k; done; done
  st "pair $k done"
done
NCU="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)"
for spec in "base:1000000" "head:1000000" "head:10000" "base:10000"; do
  v=${spec%%:*}; rows=${spec#*:}
  left=$(( 575 - ($(date +%s) - T0) )); [ $left -lt 30 ] && { echo "ncu $spec skipped"; continue; }
  timeout $left "$NCU" --kernel-name regex:fused_merge --launch-skip 300 --launch-count 2 --set full $(bin $v) --train gmt --dataset armchair --rows $rows --backend cuda --param iterations=400 --quiet > $L/ncu_${v}_$rows.txt 2>&1 || echo "!! ncu $spec rc $?"
  st "ncu $spec"; grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Grid Size|Block Size|Waves Per SM|No Eligible|Warp Cycles Per Issued" $L/ncu_${v}_$rows.txt | head -20
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
st end
tar czf $OUT/all.tar.gz logs
