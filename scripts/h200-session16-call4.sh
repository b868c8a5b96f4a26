#!/usr/bin/env bash
# Sixteenth session, H200 call 4 (issue 17): the G1 sums' products as calls by default
# (call 3), their operands by value instead (CRU_CALLS_BY_VALUE), G2's Fq2 products as
# calls (CRU_G2_SUMS_PRODUCTS=0), blocks of 32 for G2, and the scatter placing four
# windows a thread.
#   bash .device/on-device.sh bash .device/h200-session16-call4.sh
set -uo pipefail
log=$OUT/call4.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda"
run 120 "cuda: msm-g1 2^20,2^24 default (calls, scatter of 4 windows)" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 150 "cuda: msm-g1, calls by value" env CRUCIBLE_CUDA_NVRTC_OPTIONS=-DCRU_CALLS_BY_VALUE $C --op msm-g1 --sizes 2^20,2^24 --repeat 5
run 90 "cuda: msm-g2 2^20 default" $C --op msm-g2 --sizes 2^20 --repeat 7
run 90 "cuda: msm-g2 2^20, blocks of 32" env CRUCIBLE_CUDA_MSM_SUMS_BLOCK=32 $C --op msm-g2 --sizes 2^20 --repeat 7
run 150 "cuda: msm-g2 2^20, Fq2 products as calls" env CRUCIBLE_CUDA_NVRTC_OPTIONS=-DCRU_G2_SUMS_PRODUCTS=0 $C --op msm-g2 --sizes 2^20 --repeat 7
run 90 "ncu: G1 2^24 scatter (4 windows a thread)" bash -c "ncu --clock-control none --kernel-name regex:msm_scatter --launch-count 1 --metrics gpu__time_duration.sum $C --op msm-g1 --sizes 2^24 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -4"
run 100 "cuda: prove 2^20 synthetic key" $C --op prove --sizes 2^20 --repeat 5 --synthetic-key
run 150 "conformance cuda msm 2^20" crucible conformance --backend cuda --max-log-size 20 --filter msm
cat "$log"
