#!/usr/bin/env bash
# Eighth session, H200 call 2: the issue-17 table against sppark in the same call
# (sppark's harness first, then crucible's rows: resident with window planes built
# eagerly, a long-running prover's steady state; "+transfers" as a one-shot MSM under
# the default policy, which builds none), the proof, throughput, and issue 18's
# value-based straight-line wgpu form against the interpreter.
#   bash .device/on-device.sh bash .device/h200-session8-call2.sh
# with .device/sppark copied from ../shared/peers/sppark.
set -uo pipefail
log=$OUT/call2.log
run() { # run LIMIT_S LABEL COMMAND...
  local limit=$1 label=$2; shift 2
  echo "=== $label" >>"$log"
  local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "--- exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"
}
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_CUDA_CACHE=/tmp/cubin
run 240 "sppark peer harness" bash .device/sppark/run-on-device.sh
for op in msm-g1 msm-g2 ntt; do
  sizes=2^20,2^24; [ $op = msm-g2 ] && sizes=2^20
  CRUCIBLE_CUDA_MSM_PLANES_BUILD=eager run 90 "eager: bench $op $sizes" \
    crucible bench --backend cuda --op $op --sizes $sizes --repeat 7
done
run 90 "paid (default): bench msm-g1 2^20,2^24 (+transfers = one-shot)" \
  crucible bench --backend cuda --op msm-g1 --sizes 2^20,2^24 --repeat 7
CRUCIBLE_CUDA_MSM_PLANES_BUILD=eager run 120 "eager: bench prove 2^20 synthetic key" \
  crucible bench --backend cuda --op prove --sizes 2^20 --repeat 5 --synthetic-key
CRUCIBLE_CUDA_MSM_PLANES_BUILD=eager run 120 "eager: bench prove 2^20 bits=0.9 synthetic key" \
  crucible bench --backend cuda --op prove --sizes 2^20 --repeat 5 --synthetic-key --scalars bits=0.9
run 150 "prove 2^20 --proofs 64 --workers-per-device 2" \
  crucible prove --backend cuda --constraints 2^20 --proofs 64 --workers-per-device 2
for f in straight interpreted; do
  CRUCIBLE_WGPU_FORMULAS=$f run 150 "wgpu $f: conformance --filter msm --max-log-size 12" \
    crucible conformance --backend wgpu --filter msm --max-log-size 12
  CRUCIBLE_WGPU_FORMULAS=$f run 120 "wgpu $f: bench msm-g1,msm-g2 2^16 then 2^20" \
    crucible bench --backend wgpu --op msm-g1 --sizes 2^16,2^20 --repeat 3
done
CRUCIBLE_WGPU_FORMULAS=straight run 90 "wgpu straight: bench msm-g2 2^16" \
  crucible bench --backend wgpu --op msm-g2 --sizes 2^16 --repeat 3
cat "$log"
