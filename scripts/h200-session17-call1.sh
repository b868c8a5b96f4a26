#!/usr/bin/env bash
# Seventeenth session, H200 call 1: the sixteenth session's review mend on the device
# (conformance on every backend and cuda to 2^20, prove --check 2^20); the proof's NTT
# phase at 2^21 under the warp plan against the block plan; the G1 bucket sums'
# products in pairs of calls (CRU_G1_SUMS_PRODUCTS=3, seven rounds, and with
# CRU_PAIRS_SIX six) against single calls.
#   bash .device/on-device.sh bash .device/h200-session17-call1.sh
set -uo pipefail
log=$OUT/call1.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda --repeat 7"
N="$C --sizes 2^21 --repeat 9"
for path in shared-w shared; do
  run 90 "ntt, intt, coset-ntt 2^21, $path" bash -c "export CRUCIBLE_CUDA_NTT=$path; $N --op ntt; $N --op intt; $N --op coset-ntt"
done
run 60 "msm-g1 2^20,2^24, msm-g2 2^20 (defaults)" bash -c "$C --op msm-g1 --sizes 2^20,2^24; $C --op msm-g2 --sizes 2^20"
P7="-DCRU_G1_SUMS_PRODUCTS=3"
P6="-DCRU_G1_SUMS_PRODUCTS=3 -DCRU_PAIRS_SIX"
for opts in "$P7" "$P6"; do
  run 120 "msm-g1 2^20,2^24, $opts" env CRUCIBLE_CUDA_NVRTC_OPTIONS="$opts" $C --op msm-g1 --sizes 2^20,2^24
done
run 60 "msm-g1 2^20,2^24 (defaults again)" $C --op msm-g1 --sizes 2^20,2^24
run 120 "conformance --backend all" crucible conformance --backend all
run 120 "conformance cuda 2^20" crucible conformance --backend cuda --max-log-size 20
for opts in "$P7" "$P6"; do
  run 90 "conformance cuda 2^20 msm, $opts" env CRUCIBLE_CUDA_NVRTC_OPTIONS="$opts" crucible conformance --backend cuda --max-log-size 20 --filter msm
done
run 120 "prove --check 2^20, 4 proofs" crucible prove --backend cuda --constraints 2^20 --proofs 4 --check
run 60 "prove 2^20, 4 proofs, NTT shared" env CRUCIBLE_CUDA_NTT=shared crucible prove --backend cuda --constraints 2^20 --proofs 4
run 60 "prove 2^20, 4 proofs, NTT shared-w" crucible prove --backend cuda --constraints 2^20 --proofs 4
cat "$log"
