#!/usr/bin/env bash
# The witness-aware MSM (issue 17) on the H200, old path against new in one call:
# stage with ../shared/gpu/stage.sh, copy this script to .device/, then
#   bash .device/on-device.sh bash .device/h200-ones.sh      (carry [".device"])
# About 4-5 minutes. `crucible conformance --backend cuda --max-log-size 20` is a call
# of its own. The log is $OUT/ones.log; bench medians are device-event times.
set -uo pipefail
log=$OUT/ones.log
export CRUCIBLE_CUDA_CACHE=/tmp/cubin CRUCIBLE_CACHE_DIR=/tmp/keys
for op in msm-g1 msm-g2; do
  for mix in full bits=0.9 bits=0.99; do
    for ones in 1 0; do
      echo "=== CRUCIBLE_CUDA_MSM_ONES=$ones bench --op $op --sizes 2^20 --repeat 7 --scalars $mix" >>"$log"
      CRUCIBLE_CUDA_MSM_ONES=$ones timeout 90 crucible bench --backend cuda --op $op \
        --sizes 2^20 --repeat 7 --scalars "$mix" >>"$log" 2>&1
      echo "exit $?" >>"$log"
    done
  done
done
for ones in 1 0; do
  echo "=== CRUCIBLE_CUDA_MSM_ONES=$ones prove --constraints 2^20 --witness bits=0.9 --proofs 4 --check" >>"$log"
  CRUCIBLE_CUDA_MSM_ONES=$ones timeout 200 crucible prove --backend cuda --constraints 2^20 \
    --witness bits=0.9 --proofs 4 --check 2>&1 | grep -v '^proof [0-9]' >>"$log"
  echo "exit ${PIPESTATUS[0]}" >>"$log"
done
