#!/usr/bin/env bash
# Call 3 (twenty-first session, 1x H200): GMT GPU tests and Table 3 at HEAD (fresh): its committed
# rows were 37a3b0c's, before the twentieth session's merge kernel (d41c6fb).
set -u
mkdir -p logs
export GPUDM_GIT_SHA=34740a32f8f043539ff4b92803ce03eb40a55683 GPUDM_DATA_DIR=$PWD/datasets/cache DEVICE_CALL_LIMIT=560
GMT_SANITIZER=0 GMT_FRESH=1 GMT_STAGES=tests,table3 OUT=/tmp/gmtout OUT_DIR=$PWD/logs/gmt_tables bash scripts/device/gmt.sh > logs/gmt_tables.log 2>&1
echo "gmt rc=$?"; grep -E "PASSED|FAILED|status|== |moved" logs/gmt_tables.log | head -30
cp .alloc/c12.sh logs/gmt_tables/script.sh
tar czf $OUT/all.tar.gz --exclude='*.bin' results/h200/gmt_table3.* results/h200/previous logs
