#!/usr/bin/env bash
# Eighteenth session, H200 call 3 (issue 17's throughput): the engine evaluates A·z,
# B·z, C·z on its synthesis threads instead of on the device workers, so that a
# worker's time is the device's. Prediction: `--proofs 64 --workers-per-device 2` from
# 9.42 proofs/s (call 2, CPU evaluation 84 ms on the workers) to about 12; one worker
# to about 1000 / (76 + 5) ≈ 12. Then prove --check on the new path, and the
# bit-heavy witness.
#   bash .device/on-device.sh bash .device/h200-session18-call3.sh
set -uo pipefail
log=$OUT/call3.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
P="crucible prove --backend cuda --constraints 2^20"
run 150 "prove --check 2^20, 4 proofs" $P --proofs 4 --check
run 60 "prove 2^20, 64 proofs, 2 workers" $P --proofs 64 --workers-per-device 2
run 60 "prove 2^20, 64 proofs, 1 worker" $P --proofs 64 --workers-per-device 1
run 60 "prove 2^20, 64 proofs, 2 workers (again)" $P --proofs 64 --workers-per-device 2
run 60 "prove 2^20, 64 proofs, 2 workers, 8 synthesis threads" $P --proofs 64 --workers-per-device 2 --synthesis-threads 8
run 150 "prove 2^20 bits=0.9, 64 proofs, 2 workers" $P --witness bits=0.9 --proofs 64 --workers-per-device 2
run 100 "conformance cuda 2^20 proof" crucible conformance --backend cuda --max-log-size 20 --filter proof
cat "$log"
