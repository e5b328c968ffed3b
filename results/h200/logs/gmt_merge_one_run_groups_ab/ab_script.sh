#!/usr/bin/env bash
# A/B on one machine: HEAD's merge kernel (a group of one run writes its record in level 1) against
# 3a6f889's (every run through the run sums), whole 10,000-iteration Pol and Elnino runs, interleaved.
set -u
export GPUDM_GIT_SHA=6fb43c033fe78e16d9cb3caa88c80efa391920dc GPUDM_DATA_DIR=$PWD/datasets/cache DEVICE_CALL_LIMIT=595
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread
ROOT=$PWD
L=$ROOT/logs/ab_merge; mkdir -p $L
. scripts/device/common.sh
T0=$(date +%s)
rm -rf /tmp/base; mkdir -p /tmp/base && tar -C $ROOT --exclude=./build-device --exclude=./.git --exclude=./results --exclude=./datasets/cache --exclude=./logs -cf - . | tar -C /tmp/base -xf -
cp .alloc/base/fused.cuh /tmp/base/backends/cuda/gmt/fused.cuh; cp .alloc/base/fast.cu /tmp/base/backends/cuda/gmt/fast.cu
(GPUDM_BUILD_TARGETS=run_experiment GPUDM_JOBS=8 OUT=/tmp/o1 bash scripts/device/run_all.sh build > $L/build_head.log 2>&1) &
(cd /tmp/base && BUILD=/tmp/base/build-device GPUDM_BUILD_TARGETS=run_experiment GPUDM_JOBS=8 OUT=/tmp/o2 bash scripts/device/run_all.sh build > $L/build_base.log 2>&1) &
wait
echo "builds done at $(( $(date +%s) - T0 )) s"; tail -2 $L/build_head.log $L/build_base.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $L/gpu.txt 2>&1
for k in 1 2 3; do
  order="head base"; [ $((k%2)) = 0 ] && order="base head"
  for name in pol elnino; do
    for v in $order; do
      B=$ROOT/build-device; [ $v = base ] && B=/tmp/base/build-device
      left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 30 ] && continue
      timeout $left $B/experiments/run_experiment --train gmt --dataset $name --backend cuda --param iterations=10000 --quiet         --metrics-out $L/ab_${name}_${v}_$k.json > $L/ab_${name}_${v}_$k.log 2>&1 || echo "!! $name $v $k failed"
      echo "[$(( $(date +%s) - T0 ))s] $name $v $k"
    done
  done
done
tar czf $OUT/ab.tar.gz logs
