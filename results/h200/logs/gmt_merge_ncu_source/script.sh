#!/usr/bin/env bash
# Call 2: Nsight Compute source page of fused_merge_kernel (HEAD), Armchair 10K and 1M.
set -u
export GPUDM_GIT_SHA=8f72ea99e4f473bbb46a0e0534e3a7904d110e94 GPUDM_DATA_DIR=$PWD/datasets/cache DEVICE_CALL_LIMIT=590
ROOT=$PWD; L=$ROOT/logs/merge_src; mkdir -p $L
. scripts/device/common.sh
T0=$(date +%s); st() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
GPUDM_BUILD_TARGETS="run_experiment" OUT=/tmp/o1 bash scripts/device/run_all.sh build > $L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
st built
[ -d "$ROOT/.deps/usr" ] && export LD_LIBRARY_PATH="$ROOT/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
NCU="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)"
for rows in 10000 1000000; do
  timeout 200 "$NCU" --kernel-name regex:fused_merge --launch-skip 300 --launch-count 1 --set full --import-source yes --page source --print-source cuda,sass \
    build-device/experiments/run_experiment --train gmt --dataset armchair --rows $rows --backend cuda --param iterations=400 --quiet > $L/src_$rows.txt 2>&1 || echo "!! src $rows rc $?"
  st "src $rows"
  GPUDM_GMT_MERGE_SOLVE=0 timeout 120 "$NCU" --kernel-name regex:fused_ --launch-skip 300 --launch-count 6 --section SpeedOfLight --section LaunchStats --section WarpStateStats \
    build-device/experiments/run_experiment --train gmt --dataset armchair --rows $rows --backend cuda --param iterations=400 --quiet > $L/nosolve_$rows.txt 2>&1 || echo "!! nosolve $rows rc $?"
  st "nosolve $rows"; grep -E "^  fused_|Duration" $L/nosolve_$rows.txt | head -24
done
gzip -f $L/src_*.txt
tar czf $OUT/all.tar.gz logs
