#!/usr/bin/env bash
# Sixteenth session, H200 call 1 (issue 17): profiles for the session's kernel work,
# on the fifteenth session's final binary. sppark's NTT kernels and crucible's under
# ncu (the same sections), the batch-affine G1 sums at 2^22/2^24 with more lanes
# (whether they pay at large sizes), G2's windows at 2^18/2^19 (a floor per group), the
# 2^24-constraint proof (its row was last measured in the fourth session).
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session16-call1.sh
set -uo pipefail
log=$OUT/call1.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda"
A="env CRUCIBLE_CUDA_MSM_ACCUMULATE=affine"
SEC="--section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
run 240 "sppark 0.1.16 peer (ntt:20 ntt:24, median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh" ntt:20 ntt:24
run 90 "cuda: ntt 2^20,2^24 (same call)" $C --op ntt --sizes 2^20,2^24 --repeat 7
run 120 "ncu: sppark ntt 2^20 (resident NN is the first mode)" bash -c "ncu --clock-control none --launch-count 12 $SEC /tmp/sppark-peer/build/harness /tmp/sppark-peer/data --repeat 1 ntt:20 2>&1 | grep -v '^==PROF==' | head -900"
run 120 "ncu: crucible ntt 2^20" bash -c "ncu --clock-control none --kernel-name regex:ntt --launch-count 6 $SEC $C --op ntt --sizes 2^20 --repeat 1 2>&1 | grep -v '^==PROF==' | head -600"
run 200 "cuda: msm-g1 2^22,2^24 xyzz" $C --op msm-g1 --sizes 2^22,2^24 --repeat 5
for l in 16 32 64; do
  run 200 "cuda: msm-g1 2^22,2^24 affine, $l lanes" env CRUCIBLE_CUDA_MSM_AFFINE_LANES=$l $A $C --op msm-g1 --sizes 2^22,2^24 --repeat 5
done
run 150 "ncu: G1 2^24 accumulate, xyzz and affine (32 lanes)" bash -c "ncu --clock-control none --launch-count 1 --kernel-name regex:accumulate $SEC $C --op msm-g1 --sizes 2^24 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -120; CRUCIBLE_CUDA_MSM_AFFINE_LANES=32 CRUCIBLE_CUDA_MSM_ACCUMULATE=affine ncu --clock-control none --launch-count 1 --kernel-name regex:accumulate $SEC $C --op msm-g1 --sizes 2^24 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -120"
run 100 "nsys-free kernel split: G1 2^24 xyzz (ncu durations)" bash -c "ncu --clock-control none --metrics gpu__time_duration.sum --csv $C --op msm-g1 --sizes 2^24 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -60"
for c in 14 15 16; do
  run 60 "cuda: plain msm-g2 2^18,2^19, c=$c" env CRUCIBLE_CUDA_MSM_PLANES=1 CRUCIBLE_CUDA_WINDOW_BITS=$c $C --op msm-g2 --sizes 2^18,2^19 --repeat 5
done
run 420 "cuda: prove 2^24 constraints, synthetic key, 3 proofs" crucible prove --backend cuda --constraints 2^24 --proofs 3 --synthetic-key --synthesis-threads 12
cat "$log"
