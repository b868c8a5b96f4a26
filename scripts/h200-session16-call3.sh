#!/usr/bin/env bash
# Sixteenth session, H200 call 3 (issue 17): the G1 bucket sums' products as calls
# (CRU_G1_SUMS_PRODUCTS=2: a fifth of their stalls wait on instructions), the mixed
# addition doubling P for G1 too (128 registers), where the scatter's 10.7 ms at 2^24
# go, and the 2^20 proof with G2's new window floor.
#   bash .device/on-device.sh bash .device/h200-session16-call3.sh
set -uo pipefail
log=$OUT/call3.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda"
run 120 "cuda: msm-g1 2^20,2^24 default" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 150 "cuda: msm-g1, products as calls" env CRUCIBLE_CUDA_NVRTC_OPTIONS=-DCRU_G1_SUMS_PRODUCTS=2 $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 150 "cuda: msm-g1, products as calls, blocks of 32" env CRUCIBLE_CUDA_MSM_SUMS_BLOCK=32 CRUCIBLE_CUDA_NVRTC_OPTIONS=-DCRU_G1_SUMS_PRODUCTS=2 $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 150 "cuda: msm-g1, P doubled (128 registers)" env CRUCIBLE_CUDA_NVRTC_OPTIONS=-DCRU_MADD_DOUBLES_P=1 $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 90 "ncu: G1 accumulate stalls, products as calls" bash -c "CRUCIBLE_CUDA_NVRTC_OPTIONS=-DCRU_G1_SUMS_PRODUCTS=2 ncu --clock-control none --launch-count 1 --kernel-name regex:accumulate --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio',launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum $C --op msm-g1 --sizes 2^20 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -40"
run 90 "ncu: G1 accumulate, default, instructions" bash -c "ncu --clock-control none --launch-count 1 --kernel-name regex:accumulate --metrics smsp__inst_executed.sum,gpu__time_duration.sum $C --op msm-g1 --sizes 2^20 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -8"
run 120 "ncu: G1 2^24 scatter and digits" bash -c "ncu --clock-control none --kernel-name 'regex:msm_scatter|msm_digits' --launch-count 4 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy $C --op msm-g1 --sizes 2^24 --repeat 1 2>&1 | grep -v '^==PROF==' | head -400"
run 120 "cuda: prove 2^20 synthetic key" $C --op prove --sizes 2^20 --repeat 5 --synthetic-key
cat "$log"
