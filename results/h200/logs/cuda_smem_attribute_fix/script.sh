#!/usr/bin/env bash
# Twenty-first session, last call: allow_dynamic_smem (the dynamic shared-memory attribute only
# grows) on the GPU: the new CudaCommon test and Pittsburgh's equivalence tests plain and under
# memcheck (where the race showed), the rule engine's gpu tests plain.
set -u
mkdir -p logs; ROOT=$PWD
export GPUDM_GIT_SHA=b9dbb878a6bcac5ec24506d0b6a1852c5ea629f7 GPUDM_DATA_DIR=$PWD/datasets/cache DEVICE_CALL_LIMIT=270
. scripts/device/common.sh
T0=$(date +%s)
L=logs/smem_attr; mkdir -p $L
GPUDM_BUILD_TARGETS="test_cuda_common test_pittsburgh_equivalence test_rule_engine" OUT=/tmp/ob bash scripts/device/run_all.sh build > $L/build.log 2>&1 || tail -20 $L/build.log
echo "built after $(( $(date +%s) - T0 ))s"
[ -d "$PWD/.deps/usr" ] && export LD_LIBRARY_PATH="$PWD/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
B=build-device/tests
timeout 30 $B/cuda/test_cuda_common > $L/test_cuda_common.log 2>&1; echo "cuda_common rc=$?"; grep -E "^\[  (FAILED|PASSED|SKIPPED) |DynamicShared" $L/test_cuda_common.log
timeout 40 $CS --tool memcheck --error-exitcode 99 $B/cuda/test_cuda_common --gtest_filter='CudaCommon.DynamicShared*' > $L/test_cuda_common.memcheck.log 2>&1; echo "cuda_common memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $L/test_cuda_common.memcheck.log
P=$(ls $B/pittsburgh/test_pittsburgh_equivalence)
timeout 60 $P --gtest_filter='*cuda*' > $L/pitt_eq.log 2>&1; echo "pitt eq rc=$?"; grep -E "^\[  (FAILED|PASSED|SKIPPED) " $L/pitt_eq.log
for k in 1 2 3; do timeout 60 $CS --tool memcheck --error-exitcode 99 $P --gtest_filter='*cuda*' > $L/pitt_eq.memcheck.$k.log 2>&1; echo "pitt eq memcheck $k rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $L/pitt_eq.memcheck.$k.log; done
R=$(ls $B/rules/test_rule_engine 2>/dev/null || find build-device/tests -name test_rule_engine | head -1)
timeout 60 $R --gtest_filter='*cuda*' > $L/rule_engine.log 2>&1; echo "rule engine rc=$?"; grep -E "^\[  (FAILED|PASSED|SKIPPED) " $L/rule_engine.log | head
echo "end after $(( $(date +%s) - T0 ))s"
tar czf $OUT/all.tar.gz logs
