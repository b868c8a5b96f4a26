#!/usr/bin/env bash
# Fifteenth session, H200 call 3: the session's final defaults (G2's lazy Fq2 product
# and doubling of P, 13-bit plain windows from 2^15 to 2^18 terms, the refit cost
# model): conformance on every backend and CUDA at 2^20, prove --check at 2^20, the
# G2 MSM against sppark 0.1.16 in the same call, the streamed 2^20 proof's prediction.
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session15-call3.sh
set -uo pipefail
log=$OUT/call3.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda"
run 120 "conformance --backend all" crucible conformance --backend all
run 200 "conformance --backend cuda --max-log-size 20" crucible conformance --backend cuda --max-log-size 20
run 60 "cuda: msm-g2 2^20, msm-g1 2^20" bash -c "$C --op msm-g2 --sizes 2^20 --repeat 7; $C --op msm-g1 --sizes 2^20 --repeat 7"
run 150 "sppark 0.1.16 peer (g2:20, median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh" g2:20
run 60 "cuda: plain msm-g1 2^14..2^19 (13-bit windows from 2^15)" env CRUCIBLE_CUDA_MSM_PLANES=1 $C --op msm-g1 --sizes 2^14..2^19 --repeat 5
run 90 "cuda: prove 2^20 synthetic key" $C --op prove --sizes 2^20 --repeat 5 --synthetic-key
run 240 "prove --check 2^20" crucible prove --backend cuda --constraints 2^20 --proofs 4 --check
run 30 "plan: 2^20 under 400MiB" bash -c "crucible plan --backend cuda --constraints 2^20 --memory-limit 400MiB | grep -n 'predicted\|<- chosen'"
run 90 "prove 2^20 under 400MiB (streamed)" crucible prove --backend cuda --constraints 2^20 --proofs 3 --memory-limit 400MiB --synthetic-key
cat "$log"
