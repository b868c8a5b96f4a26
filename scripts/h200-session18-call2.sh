#!/usr/bin/env bash
# Eighteenth session, H200 call 2 (issue 17): the G2 bucket sums at more warps an SM
# (their Fq2 products' Fq products as calls, -DCRU_FQ2_FQ_CALLS: 190 registers; launch
# bounds of 3 blocks, -DCRU_G2_ACC_MIN_BLOCKS=3: 168; blocks of 64 or 32), each against
# the default compiled by the same NVRTC on the device; the G1 default by that NVRTC
# too (call 1's pairs ran against the shipped NVRTC 12.9 cubins); then the done-means
# runs on the session's defaults.
#   bash .device/on-device.sh bash .device/h200-session18-call2.sh
set -uo pipefail
log=$OUT/call2.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda --repeat 7"
G2="$C --op msm-g2 --sizes 2^20"
BASE="-DCRU_AB_BASELINE"
run 60 "msm-g2 2^20, shipped cubins" $G2
run 90 "msm-g2 2^20, NVRTC on the device [$BASE]" env CRUCIBLE_CUDA_NVRTC_OPTIONS="$BASE" $G2
for opts in "-DCRU_FQ2_FQ_CALLS" "-DCRU_FQ2_FQ_CALLS -DCRU_G2_ACC_MIN_BLOCKS=3" "-DCRU_G2_ACC_MIN_BLOCKS=3" "-DCRU_G2_ACC_MIN_BLOCKS=3 -DCRU_FQ2_LAZY=0"; do
  run 90 "msm-g2 2^20 [$opts]" env CRUCIBLE_CUDA_NVRTC_OPTIONS="$opts" $G2
done
for block in 64 32; do
  run 90 "msm-g2 2^20 [-DCRU_FQ2_FQ_CALLS], sums blocks of $block" env CRUCIBLE_CUDA_MSM_SUMS_BLOCK=$block CRUCIBLE_CUDA_NVRTC_OPTIONS="-DCRU_FQ2_FQ_CALLS" $G2
done
run 90 "msm-g2 2^20 [$BASE] (again)" env CRUCIBLE_CUDA_NVRTC_OPTIONS="$BASE" $G2
run 90 "msm-g1 2^20,2^24, NVRTC on the device [$BASE]" env CRUCIBLE_CUDA_NVRTC_OPTIONS="$BASE" $C --op msm-g1 --sizes 2^20,2^24
run 60 "conformance cuda 2^20 msm-g2 [-DCRU_FQ2_FQ_CALLS -DCRU_G2_ACC_MIN_BLOCKS=3]" env CRUCIBLE_CUDA_NVRTC_OPTIONS="-DCRU_FQ2_FQ_CALLS -DCRU_G2_ACC_MIN_BLOCKS=3" crucible conformance --backend cuda --max-log-size 20 --filter msm-g2
run 100 "prove --check 2^20, 4 proofs" crucible prove --backend cuda --constraints 2^20 --proofs 4 --check
run 90 "prove 2^20, 64 proofs, 2 workers" crucible prove --backend cuda --constraints 2^20 --proofs 64 --workers-per-device 2
run 80 "conformance cuda 2^20" crucible conformance --backend cuda --max-log-size 20
run 70 "conformance --backend all" crucible conformance --backend all
cat "$log"
