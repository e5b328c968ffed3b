#!/usr/bin/env bash
# racecheck of test_gp_rules_runs at HEAD (the full run's one binary not reached).
set -u
mkdir -p logs; ROOT=$PWD
export GPUDM_GIT_SHA=03cdb5c8ead697d000f65e08878ecd35da1ddd59 GPUDM_DATA_DIR=$PWD/datasets/cache DEVICE_CALL_LIMIT=170
. scripts/device/common.sh
T0=$(date +%s)
GPUDM_BUILD_TARGETS="test_gp_rules_runs" OUT=/tmp/ob bash scripts/device/run_all.sh build > logs/build.log 2>&1 || tail -20 logs/build.log
echo "built after $(( $(date +%s) - T0 ))s"
[ -d "$PWD/.deps/usr" ] && export LD_LIBRARY_PATH="$PWD/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GPUDM_SANITIZE_BINARIES='^test_gp_rules_runs$' BUILD=build-device OUT_DIR=$PWD/logs/sanitize_gp GPUDM_SANITIZE_TOOLS=racecheck GPUDM_SANITIZE_TIMEOUT=120 bash scripts/device/sanitize.sh > logs/sanitize.log 2>&1
echo "rc=$? after $(( $(date +%s) - T0 ))s"; cat logs/sanitize_gp/sanitize/summary.md
tar czf $OUT/all.tar.gz logs
