#!/usr/bin/env bash
# Eighteenth session, H200 call 1 (issue 17): the G1 bucket sums' products in pairs of
# calls (CRU_G1_SUMS_PRODUCTS=3: seven call rounds an addition, and with CRU_PAIRS_SIX
# six) against single calls, interleaved, each in the same call as sppark's harness;
# their stalls under ncu; the missing profiles of the unmet rows (G2's sums, the NTT
# at 2^24, the proof's transforms at 2^21); conformance of the six-round pairs.
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session18-call1.sh
set -uo pipefail
log=$OUT/call1.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda"
P7="-DCRU_G1_SUMS_PRODUCTS=3"
P6="-DCRU_G1_SUMS_PRODUCTS=3 -DCRU_PAIRS_SIX"
run 240 "sppark 0.1.16 peer (median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh"
run 60 "cuda: ntt 2^20,2^24 default" $C --op ntt --sizes 2^20,2^24 --repeat 7
run 60 "cuda: msm-g1 2^20,2^24 default" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 60 "cuda: msm-g2 2^20 default" $C --op msm-g2 --sizes 2^20 --repeat 7
for opts in "$P7" "$P6"; do
  run 120 "cuda: msm-g1 2^20,2^24, $opts" env CRUCIBLE_CUDA_NVRTC_OPTIONS="$opts" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
done
run 60 "cuda: msm-g1 2^20,2^24 default (again)" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 120 "cuda: msm-g1 2^20,2^24, $P6 (again)" env CRUCIBLE_CUDA_NVRTC_OPTIONS="$P6" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
M="--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum"
for opts in "" "$P6"; do
  run 90 "ncu: G1 2^20 accumulate stalls [$opts]" bash -c "CRUCIBLE_CUDA_NVRTC_OPTIONS='$opts' ncu --clock-control none --launch-count 1 --kernel-name regex:accumulate $M $C --op msm-g1 --sizes 2^20 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -30"
done
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
run 90 "ncu: G2 2^20 accumulate" bash -c "ncu --clock-control none --launch-count 1 --kernel-name regex:accumulate $SEC $M $C --op msm-g2 --sizes 2^20 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -120"
run 90 "ncu: G2 2^20 kernel split" bash -c "ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread --csv $C --op msm-g2 --sizes 2^20 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -40"
run 120 "ncu: ntt 2^24 kernels" bash -c "ncu --clock-control none --kernel-name regex:ntt --launch-count 8 $SEC $C --op ntt --sizes 2^24 --repeat 1 2>&1 | grep -v '^==PROF==' | head -500"
run 120 "ncu: ntt 2^21 kernel split, shared-w and shared" bash -c "for p in shared-w shared; do echo \"## \$p\"; CRUCIBLE_CUDA_NTT=\$p ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,launch__block_size --csv $C --op coset-ntt --sizes 2^21 --repeat 1 2>&1 | grep -v '^==PROF==' | tail -30; done"
run 120 "conformance cuda 2^20 msm, $P6" env CRUCIBLE_CUDA_NVRTC_OPTIONS="$P6" crucible conformance --backend cuda --max-log-size 20 --filter msm
cat "$log"
