#!/usr/bin/env bash
# Twenty-first session: the full compute-sanitizer run over every gpu-labelled test (docs/reliability.md
# "the full run is pending"): build the 13 GPU test binaries (once; the machine keeps build-device
# while warm), then memcheck over each with its gpu tests' filter.
set -u
mkdir -p logs; ROOT=$PWD
export GPUDM_GIT_SHA=b120fe0cf7e7f49754e95754a945626b9ded52f2 GPUDM_DATA_DIR=$PWD/datasets/cache DEVICE_CALL_LIMIT=${LIMIT:-560}
. scripts/device/common.sh
T0=$(date +%s)
if [ ! -x build-device/tests/gmt/gmt_cuda_tests ] || [ ! -x build-device/experiments/run_experiment ]; then
  GPUDM_BUILD_TARGETS="run_experiment test_experiments_gpu test_cuda_common test_ceilings_gpu test_rule_engine test_pittsburgh_equivalence test_pittsburgh_data test_pittsburgh_gpu test_subtree_equivalence test_subtree_cuda gmt_reference_tests gmt_cuda_tests test_vfdt_equivalence test_gp_rules_runs" OUT=/tmp/ob bash scripts/device/run_all.sh build > logs/build_memcheck.log 2>&1 || tail -20 logs/build_memcheck.log
fi
echo "built after $(( $(date +%s) - T0 ))s"
[ -d "$PWD/.deps/usr" ] && export LD_LIBRARY_PATH="$PWD/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BUILD=build-device OUT_DIR=$PWD/logs/sanitize_b120fe0_memcheck GPUDM_SANITIZE_TOOLS=memcheck GPUDM_SANITIZE_TIMEOUT=${PER:-120} bash scripts/device/sanitize.sh > logs/sanitize_memcheck.log 2>&1
echo "sanitize rc=$? after $(( $(date +%s) - T0 ))s"; cat logs/sanitize_b120fe0_memcheck/sanitize/summary.md
tar czf $OUT/all.tar.gz logs
