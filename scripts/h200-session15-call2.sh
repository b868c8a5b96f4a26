#!/usr/bin/env bash
# Fifteenth session, H200 call 2 (issue 17's MSM rows): batch-affine G1 bucket sums
# (CRUCIBLE_CUDA_MSM_ACCUMULATE=affine) and the lazily reduced Fq2 product
# (-DCRU_FQ2_LAZY=1 through NVRTC) against the defaults and against sppark 0.1.16 in
# the same call; window bits of small plain MSMs; plain sizes for the cost model.
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session15-call2.sh
set -uo pipefail
log=$OUT/call2.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda"
A="env CRUCIBLE_CUDA_MSM_ACCUMULATE=affine"
run 150 "conformance cuda msm, affine" $A crucible conformance --backend cuda --max-log-size 20 --filter msm
run 150 "cuda: msm-g1 2^20,2^24 (xyzz, default)" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 150 "cuda: msm-g1 2^20,2^24 (affine)" $A $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 90 "cuda: msm-g2 2^20 (default)" $C --op msm-g2 --sizes 2^20 --repeat 7
for o in "-DCRU_FQ2_LAZY=0" "-DCRU_FQ2_LAZY=1" "-DCRU_FQ2_LAZY=1 -DCRU_MADD_DOUBLES_P=1"; do
  run 150 "cuda: msm-g2 2^20, NVRTC $o" env "CRUCIBLE_CUDA_NVRTC_OPTIONS=$o" $C --op msm-g2 --sizes 2^20 --repeat 7
done
run 90 "cuda: msm-g1 2^20 bits=0.9 (default, affine)" bash -c "$C --op msm-g1 --sizes 2^20 --repeat 7 --scalars bits=0.9; $A $C --op msm-g1 --sizes 2^20 --repeat 7 --scalars bits=0.9"
run 240 "sppark 0.1.16 peer (g1:20 g1:24 g2:20, median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh" g1:20 g1:24 g2:20
run 120 "cuda: prove 2^20 synthetic key (default, affine)" bash -c "$C --op prove --sizes 2^20 --repeat 5 --synthetic-key; $A $C --op prove --sizes 2^20 --repeat 5 --synthetic-key"
for l in 8 32; do
  run 90 "cuda: msm-g1 2^20,2^24 (affine, $l lanes)" env CRUCIBLE_CUDA_MSM_AFFINE_LANES=$l $A $C --op msm-g1 --sizes 2^20,2^24 --repeat 5
done
run 60 "ncu: G1 2^20 accumulate, xyzz and affine" bash -c "ncu --clock-control none --launch-count 1 --kernel-name regex:accumulate --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis $C --op msm-g1 --sizes 2^20 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -80; CRUCIBLE_CUDA_MSM_ACCUMULATE=affine ncu --clock-control none --launch-count 1 --kernel-name regex:accumulate --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis $C --op msm-g1 --sizes 2^20 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -80"
for c in 12 13 14 16; do
  run 60 "cuda: plain msm-g1 2^15..2^18, c=$c" env CRUCIBLE_CUDA_MSM_PLANES=1 CRUCIBLE_CUDA_WINDOW_BITS=$c $C --op msm-g1 --sizes 2^15..2^18 --repeat 5
done
run 90 "cuda: plain msm-g2 2^19..2^21 (cost fit)" env CRUCIBLE_CUDA_MSM_PLANES=1 $C --op msm-g2 --sizes 2^19..2^21 --repeat 5
cat "$log"
