#!/usr/bin/env bash
# Eighth session, H200 call 1: correctness and A/B of the new CUDA paths (shared-
# memory NTT, witness-aware MSM, split NVRTC compile, window planes when they pay,
# pinned read-backs). From the project root on the device:
#   bash .device/on-device.sh bash .device/h200-session8-call1.sh
# with `crucible`, `test-device` and `test-crucible_backend_cuda` in .device/bin.
set -uo pipefail
log=$OUT/call1.log
run() { # run LIMIT_S LABEL COMMAND...
  local limit=$1 label=$2; shift 2
  echo "=== $label" >>"$log"
  local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "--- exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"
}
export CRUCIBLE_CACHE_DIR=/tmp/keys
nproc >>"$log"
# Cold compiles (no cache): split programs, then the single program of before.
for p in split one; do
  CRUCIBLE_CUDA_CACHE= CRUCIBLE_CUDA_NVRTC_PROGRAMS=$p RUST_LOG=warn,crucible_backend_cuda=info \
    run 120 "cold compile, NVRTC programs $p (conformance ntt/forward/2^3)" \
    crucible conformance --backend cuda --max-log-size 3 --filter ntt/forward/2^3
done
export CRUCIBLE_CUDA_CACHE=/tmp/cubin
run 200 "conformance --backend cuda --max-log-size 20 (planes paid: none built)" \
  crucible conformance --backend cuda --max-log-size 20
CRUCIBLE_CUDA_MSM_PLANES_BUILD=eager run 200 "conformance --backend cuda --max-log-size 20, planes eager" \
  crucible conformance --backend cuda --max-log-size 20 --filter msm
CRUCIBLE_REQUIRE=cuda run 150 "device tests" .device/bin/test-device --test-threads=1
run 60 "cuda lib tests" .device/bin/test-crucible_backend_cuda
for ntt in shared shared-swap passes; do
  CRUCIBLE_CUDA_NTT=$ntt run 60 "CRUCIBLE_CUDA_NTT=$ntt bench ntt 2^20,2^24" \
    crucible bench --backend cuda --op ntt --sizes 2^20,2^24 --repeat 7
done
for ones in 1 0; do
  for op in msm-g1 msm-g2; do
    for mix in full bits=0.9 bits=0.99; do
      CRUCIBLE_CUDA_MSM_ONES=$ones CRUCIBLE_CUDA_MSM_PLANES_BUILD=eager \
        run 60 "ONES=$ones planes eager: $op 2^20 --scalars $mix" \
        crucible bench --backend cuda --op $op --sizes 2^20 --repeat 7 --scalars $mix
    done
  done
done
run 150 "prove 2^20 --check --proofs 4" crucible prove --backend cuda --constraints 2^20 --check --proofs 4
run 150 "prove 2^20 --check --proofs 4 --witness bits=0.9" \
  crucible prove --backend cuda --constraints 2^20 --check --proofs 4 --witness bits=0.9
cat "$log"
