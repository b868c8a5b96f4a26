#!/usr/bin/env bash
# Sixteenth session, H200 call 2 (issue 17): the XYZZ bucket sums in smaller blocks
# (one or two more warps an SM: CRUCIBLE_CUDA_MSM_SUMS_BLOCK with NVRTC launch bounds),
# where their stalls go, the window bits over planes re-swept since the tree reduction,
# G2's new window floor, and sppark's NTT kernels under ncu.
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session16-call2.sh
set -uo pipefail
log=$OUT/call2.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda"
run 120 "cuda: msm-g1 2^20,2^24 default (blocks of 128, 12 warps)" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 120 "cuda: msm-g1 blocks of 32 (13 warps)" env CRUCIBLE_CUDA_MSM_SUMS_BLOCK=32 $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
for b in "32 14" "64 7" "32 15" "32 16"; do
  set -- $b
  run 150 "cuda: msm-g1 blocks of $1, bounds ($1, $2)" env CRUCIBLE_CUDA_MSM_SUMS_BLOCK=$1 "CRUCIBLE_CUDA_NVRTC_OPTIONS=-DCRU_G1_ACC_BLOCK=$1 -DCRU_G1_ACC_MIN_BLOCKS=$2" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
done
run 90 "ncu: G1 2^20 accumulate stall reasons" bash -c "ncu --clock-control none --launch-count 1 --kernel-name regex:accumulate --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio',launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active $C --op msm-g1 --sizes 2^20 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -40"
for c in 19 22; do
  run 120 "cuda: msm-g1 2^20,2^24 over planes, c=$c" env CRUCIBLE_CUDA_WINDOW_BITS=$c $C --op msm-g1 --sizes 2^20,2^24 --repeat 5
done
for c in 18 20; do
  run 90 "cuda: msm-g2 2^20 over planes, c=$c" env CRUCIBLE_CUDA_WINDOW_BITS=$c $C --op msm-g2 --sizes 2^20 --repeat 5
done
run 90 "cuda: msm-g2 2^20 default" $C --op msm-g2 --sizes 2^20 --repeat 5
run 60 "cuda: plain msm-g2 2^17,2^18 (floor 16 from 2^18 now)" env CRUCIBLE_CUDA_MSM_PLANES=1 $C --op msm-g2 --sizes 2^17,2^18 --repeat 5
run 150 "sppark 0.1.16 peer (ntt:20, median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh" ntt:20
run 120 "ncu: sppark ntt 2^20 kernels" bash -c "ncu --clock-control none --kernel-name 'regex:NTT|bit_rev' --launch-count 8 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats /tmp/sppark-peer/build/harness /tmp/sppark-peer/data --repeat 1 ntt:20 2>&1 | grep -v '^==PROF==' | head -700"
cat "$log"
