#!/usr/bin/env bash
# Sixteenth session, H200 call 5 (issue 17): the merged helpers' kernels (warp-tile NTT
# `shared-w`, batch-affine sums v2 for G1 and G2), G2's Fq2 calls by value against by
# reference, issue 17's table against sppark in the same call, conformance on the
# final defaults.
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session16-call5.sh
set -uo pipefail
log=$OUT/call5.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda"
A="env CRUCIBLE_CUDA_MSM_ACCUMULATE=affine"
run 240 "sppark 0.1.16 peer (median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh"
run 60 "cuda: ntt 2^20,2^24 default" $C --op ntt --sizes 2^20,2^24 --repeat 7
run 60 "cuda: ntt 2^20,2^24 shared-w" env CRUCIBLE_CUDA_NTT=shared-w $C --op ntt --sizes 2^20,2^24 --repeat 7
run 120 "cuda: msm-g1 2^20,2^24 default" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 120 "cuda: msm-g1 2^20,2^22,2^24 affine v2" $A $C --op msm-g1 --sizes 2^20,2^22,2^24 --repeat 5
run 60 "cuda: msm-g2 2^20 default (Fq2 calls by value)" $C --op msm-g2 --sizes 2^20 --repeat 7
run 120 "cuda: msm-g2 2^20 calls by reference" env CRUCIBLE_CUDA_NVRTC_OPTIONS=-DCRU_CALLS_BY_REF $C --op msm-g2 --sizes 2^20 --repeat 7
run 60 "cuda: msm-g2 2^20 affine v2" $A $C --op msm-g2 --sizes 2^20 --repeat 5
run 100 "conformance cuda 2^20, ntt shared-w" env CRUCIBLE_CUDA_NTT=shared-w crucible conformance --backend cuda --max-log-size 20 --filter ntt
run 120 "conformance cuda 2^20 msm, affine v2" $A crucible conformance --backend cuda --max-log-size 20 --filter msm
run 150 "conformance cuda 2^20 (defaults)" crucible conformance --backend cuda --max-log-size 20
run 120 "prove --check 2^20, 4 proofs" crucible prove --backend cuda --constraints 2^20 --proofs 4 --check
cat "$log"
