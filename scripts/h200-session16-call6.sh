#!/usr/bin/env bash
# Sixteenth session, H200 call 6: the final defaults (NTT shared-w, Fq2 calls by
# reference), conformance on every backend, prove --check at 2^20, the 2^24 proof.
#   bash .device/on-device.sh bash .device/h200-session16-call6.sh
set -uo pipefail
log=$OUT/call6.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys
C="crucible bench --backend cuda"
run 60 "cuda: ntt 2^20,2^24, msm-g2 2^20 (defaults)" bash -c "$C --op ntt --sizes 2^20,2^24 --repeat 7; $C --op msm-g2 --sizes 2^20 --repeat 7"
run 120 "conformance --backend all" crucible conformance --backend all
run 120 "conformance cuda 2^20 ntt,msm" bash -c "crucible conformance --backend cuda --max-log-size 20 --filter ntt; crucible conformance --backend cuda --max-log-size 20 --filter msm"
run 120 "prove --check 2^20, 4 proofs" crucible prove --backend cuda --constraints 2^20 --proofs 4 --check
run 100 "prove 2^24, synthetic key, 2 proofs" crucible prove --backend cuda --constraints 2^24 --proofs 2 --synthetic-key --synthesis-threads 12
cat "$log"
