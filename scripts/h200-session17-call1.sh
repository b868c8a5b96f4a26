#!/usr/bin/env bash
# Seventeenth session, H200 call 1: the sixteenth session's review mend on the device
# (conformance on every backend and cuda to 2^20, prove --check 2^20), and the proof's
# NTT phase at 2^21 under the warp plan against the block plan.
#   bash .device/on-device.sh bash .device/h200-session17-call1.sh
set -uo pipefail
log=$OUT/call1.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda --sizes 2^21 --repeat 9"
for path in shared-w shared; do
  run 90 "ntt, intt, coset-ntt 2^21, $path" bash -c "export CRUCIBLE_CUDA_NTT=$path; $C --op ntt; $C --op intt; $C --op coset-ntt"
done
run 150 "conformance --backend all" crucible conformance --backend all
run 150 "conformance cuda 2^20" crucible conformance --backend cuda --max-log-size 20
run 120 "prove --check 2^20, 4 proofs" crucible prove --backend cuda --constraints 2^20 --proofs 4 --check
run 90 "prove 2^20, 4 proofs, NTT shared" env CRUCIBLE_CUDA_NTT=shared crucible prove --backend cuda --constraints 2^20 --proofs 4
run 90 "prove 2^20, 4 proofs, NTT shared-w" crucible prove --backend cuda --constraints 2^20 --proofs 4
cat "$log"
