#!/usr/bin/env bash
# s9-nvrtc9 on the H200: the NVRTC cold compile with the finer programs (and as one
# program, for scale), conformance after the kernel change, then each MSM with the new
# code against the old (-DCRU_RARE_DOUBLE_CALLS=0 -DCRU_ONES_TREE_CALLS=0: the
# additions' rare doublings and the 0/1 tree as before), full width and 99 % bits.
#   bash .device/on-device.sh bash scripts/h200-nvrtc9.sh
# with `crucible` and `test-crucible_backend_cuda` in .device/bin.
set -uo pipefail
log=$OUT/nvrtc9.log
run() { # run LIMIT_S LABEL COMMAND...
  local limit=$1 label=$2; shift 2
  echo "=== $label" >>"$log"
  local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "--- exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"
}
echo "cores: $(nproc); $(lscpu | grep -E '^(Thread|Core|Socket)' | tr -s ' ' | paste -sd ';')" >>"$log"
export CRUCIBLE_CACHE_DIR=/tmp/keys
for i in 1 2; do
  CRUCIBLE_CUDA_CACHE= RUST_LOG=warn,crucible_backend_cuda=info run 120 "cold compile $i (split, no cache)" \
    crucible conformance --backend cuda --max-log-size 3 --filter ntt/forward/2^3
done
CRUCIBLE_CUDA_CACHE= CRUCIBLE_CUDA_NVRTC_OPTIONS="-DCRU_RARE_DOUBLE_CALLS=0 -DCRU_ONES_TREE_CALLS=0" \
  RUST_LOG=warn,crucible_backend_cuda=info run 120 "cold compile (split, old calls)" \
  crucible conformance --backend cuda --max-log-size 3 --filter ntt/forward/2^3
export CRUCIBLE_CUDA_CACHE=/tmp/cubin
run 300 "conformance --backend cuda --max-log-size 20" \
  crucible conformance --backend cuda --max-log-size 20
run 60 "cuda lib tests" .device/bin/test-crucible_backend_cuda
for opts in "" "-DCRU_RARE_DOUBLE_CALLS=0 -DCRU_ONES_TREE_CALLS=0"; do
  for mix in full bits=0.99; do
    CRUCIBLE_CUDA_NVRTC_OPTIONS="$opts" run 150 "OPTIONS='$opts' bench msm-g1,msm-g2 2^20 $mix" \
      crucible bench --backend cuda --op msm-g1,msm-g2 --sizes 2^20 --repeat 7 --scalars $mix
  done
  CRUCIBLE_CUDA_NVRTC_OPTIONS="$opts" run 90 "OPTIONS='$opts' bench msm-g1 2^24" \
    crucible bench --backend cuda --op msm-g1 --sizes 2^24 --repeat 7
done
cat "$log"
