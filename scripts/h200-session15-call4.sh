#!/usr/bin/env bash
# Fifteenth session, H200 call 4: plain MSM window bits above 2^18 terms (G1) and the
# 13-bit windows for G2 from 2^15 to 2^18 terms (the window rule serves both groups).
#   bash .device/on-device.sh bash .device/h200-session15-call4.sh
set -uo pipefail
log=$OUT/call4.log
. "$(dirname "$0")/h200-lib.sh"
C="crucible bench --backend cuda"
for c in 13 14 15 16; do
  run 90 "cuda: plain msm-g1 2^19..2^22, c=$c" env CRUCIBLE_CUDA_MSM_PLANES=1 CRUCIBLE_CUDA_WINDOW_BITS=$c $C --op msm-g1 --sizes 2^19..2^22 --repeat 5
done
for c in 12 13 16; do
  run 90 "cuda: plain msm-g2 2^15..2^18, c=$c" env CRUCIBLE_CUDA_MSM_PLANES=1 CRUCIBLE_CUDA_WINDOW_BITS=$c $C --op msm-g2 --sizes 2^15..2^18 --repeat 5
done
cat "$log"
