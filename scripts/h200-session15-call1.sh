#!/usr/bin/env bash
# Fifteenth session, H200 call 1: pinned host scalars (ProverBackend::pin_scalars) for
# the NTT's host-in/host-out row against sppark 0.1.16's pinned and pageable modes in
# the same call (issue 17); small plain MSMs for the cost model's per-call fit.
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session15-call1.sh
set -uo pipefail
log=$OUT/call1.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
run 120 "cuda device test: pinned scalars" "$(dirname "$0")/bin/test-device" --nocapture pinned
run 60 "conformance cuda: stage" crucible conformance --backend cuda --filter stage/ --max-log-size 20
C="crucible bench --backend cuda"
for i in 1 2; do
  run 90 "cuda: ntt 2^20,2^24 host memory pinned ($i)" $C --op ntt --sizes 2^20,2^24 --repeat 7 --host-memory pinned
  run 90 "cuda: ntt 2^20,2^24 host memory pageable ($i)" $C --op ntt --sizes 2^20,2^24 --repeat 7
done
run 240 "sppark 0.1.16 peer (ntt:20 ntt:24, median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh" ntt:20 ntt:24
run 90 "cuda: plain msm-g1 2^12..2^20 (cost fit)" env CRUCIBLE_CUDA_MSM_PLANES=1 $C --op msm-g1 --sizes 2^12..2^20 --repeat 5
run 90 "cuda: plain msm-g2 2^12..2^18 (cost fit)" env CRUCIBLE_CUDA_MSM_PLANES=1 $C --op msm-g2 --sizes 2^12..2^18 --repeat 5
run 60 "plan: 2^20 under 400MiB" crucible plan --backend cuda --constraints 2^20 --memory-limit 400MiB
run 120 "prove 2^20 under 400MiB (streamed)" crucible prove --backend cuda --constraints 2^20 --proofs 3 --memory-limit 400MiB --synthetic-key
cat "$log"
