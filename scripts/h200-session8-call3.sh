#!/usr/bin/env bash
# Eighth session, H200 call 3: what the 64-proof throughput lost (the planes policy or
# the witness-aware classification), and the straight-line wgpu G1 MSM cases.
set -uo pipefail
log=$OUT/call3.log
run() { local limit=$1 label=$2; shift 2; echo "=== $label" >>"$log"; local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1; echo "--- exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"; }
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_CUDA_CACHE=/tmp/cubin
for v in "CRUCIBLE_CUDA_MSM_PLANES_BUILD=eager" "CRUCIBLE_CUDA_MSM_PLANES_BUILD=eager CRUCIBLE_CUDA_MSM_ONES=0" "CRUCIBLE_CUDA_MSM_ONES=0" "CRUCIBLE_CUDA_MSM_PLANES_BUILD=paid"; do
  run 60 "$v: prove 2^20 --proofs 64 --workers-per-device 2" \
    env $v crucible prove --backend cuda --constraints 2^20 --proofs 64 --workers-per-device 2
done
CRUCIBLE_CUDA_MSM_PLANES_BUILD=eager run 60 "eager: prove 2^20 --proofs 16 (1 worker)" \
  crucible prove --backend cuda --constraints 2^20 --proofs 16
CRUCIBLE_WGPU_FORMULAS=straight run 240 "wgpu straight: conformance --filter msm-g1 --max-log-size 16" \
  crucible conformance --backend wgpu --filter msm-g1 --max-log-size 16
grep -vE "^proof [0-9]|^ok " "$log"
