#!/usr/bin/env bash
# Eighteenth session, H200 call 4 (issue 17's table, refilled in one call): sppark's
# harness beside crucible's rows on the session's final defaults, the host-in/out
# transforms pinned, the bit-heavy proof beside the full-width one, the 2^24-constraint
# proof.
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session18-call4.sh
set -uo pipefail
log=$OUT/call4.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda --repeat 7"
run 150 "sppark 0.1.16 peer (median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh"
run 60 "cuda: ntt 2^20,2^24 (+transfers pinned)" $C --op ntt --sizes 2^20,2^24 --host-memory pinned
run 60 "cuda: msm-g1 2^20,2^24, msm-g2 2^20" bash -c "$C --op msm-g1 --sizes 2^20,2^24; $C --op msm-g2 --sizes 2^20"
run 120 "prove --check 2^20 bits=0.9, 4 proofs" crucible prove --backend cuda --constraints 2^20 --witness bits=0.9 --proofs 4 --check
run 100 "prove 2^24, synthetic key, 2 proofs" crucible prove --backend cuda --constraints 2^24 --proofs 2 --synthetic-key --synthesis-threads 12
cat "$log"
