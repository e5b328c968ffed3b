#!/usr/bin/env bash
# Call D: GMT GPU tests and Table 4 at the final merge kernel (fresh).
set -u
mkdir -p logs
export GPUDM_GIT_SHA=d41c6fb1c5480bd2cd065c5474a7ab9a5fdac2a5 GPUDM_DATA_DIR=$PWD/datasets/cache DEVICE_CALL_LIMIT=360
GMT_SANITIZER=0 GMT_FRESH=1 GMT_STAGES=tests,table4 OUT=/tmp/gmtout OUT_DIR=$PWD/logs/gmt_tables bash scripts/device/gmt.sh > logs/gmt_tables.log 2>&1
echo "gmt rc=$?"; grep -E "PASSED|FAILED|status|== |moved" logs/gmt_tables.log | head -30
tar czf $OUT/all.tar.gz --exclude='*.bin' results/h200/gmt_table4.* results/h200/previous logs
