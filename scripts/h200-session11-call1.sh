#!/usr/bin/env bash
# Eleventh session, H200 call 1: the kernels' CUBINs built into the binary (issue 17's
# NVRTC row) against the cold NVRTC compile, conformance on every backend after the
# tenth session's wgpu changes (never run on the H200), wgpu at 2^20 and the
# straight-line MSM tests, and the wgpu NTT's per-pass GPU times (issue 18's NTT row).
#   bash .device/on-device.sh bash .device/h200-session11-call1.sh [part]
# part: `a` (kernels, conformance) or `b` (wgpu); both when left out.
set -uo pipefail
part=${1:-ab}
log=$OUT/call1$part.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_WGPU_CACHE=/tmp/wgpu-pipelines
export __GL_SHADER_DISK_CACHE=0
K="env RUST_LOG=warn,crucible_backend_cuda=info"
one="crucible conformance --backend cuda --max-log-size 3 --filter ntt/forward/2^3"
if [[ $part == *a* ]]; then
  echo "cores: $(nproc)" >>"$log"
  run 60 "first kernel load, embedded CUBINs, no disk cache (1)" env CRUCIBLE_CUDA_CACHE= $K $one
  run 60 "first kernel load, embedded CUBINs, no disk cache (2)" env CRUCIBLE_CUDA_CACHE= $K $one
  run 120 "cold NVRTC compile (embedded ignored, empty disk cache)" \
    env CRUCIBLE_CUDA_IGNORE_EMBEDDED=1 CRUCIBLE_CUDA_CACHE=/tmp/cubin $K $one
  run 60 "NVRTC CUBINs from the disk cache (embedded ignored)" \
    env CRUCIBLE_CUDA_IGNORE_EMBEDDED=1 CRUCIBLE_CUDA_CACHE=/tmp/cubin $K $one
  run 240 "conformance --backend all (embedded CUBINs)" crucible conformance --backend all
  run 240 "conformance --backend cuda --max-log-size 20 (embedded CUBINs)" \
    crucible conformance --backend cuda --max-log-size 20
  for how in embedded nvrtc; do
    extra=""; [ $how = nvrtc ] && extra="CRUCIBLE_CUDA_IGNORE_EMBEDDED=1 CRUCIBLE_CUDA_CACHE=/tmp/cubin"
    for op in msm-g1 msm-g2; do
      run 60 "cuda ($how CUBINs): bench $op 2^20" env $extra \
        crucible bench --backend cuda --op $op --sizes 2^20 --repeat 7
    done
  done
  run 60 "cuda: bench ntt 2^20" crucible bench --backend cuda --op ntt --sizes 2^20 --repeat 7
fi
if [[ $part == *b* ]]; then
  run 200 "wgpu straight/registers MSM tests (ignored on llvmpipe)" \
    env CRUCIBLE_REQUIRE=wgpu .device/bin/test-wgpu --ignored straight_ --nocapture --test-threads 1
  run 300 "conformance --backend wgpu --max-log-size 20" \
    crucible conformance --backend wgpu --max-log-size 20
  run 90 "wgpu profiled: bench ntt 2^20" env CRUCIBLE_WGPU_PROFILE=1 \
    crucible bench --backend wgpu --op ntt --sizes 2^20 --repeat 2
  run 60 "wgpu: bench ntt 2^16,2^20" crucible bench --backend wgpu --op ntt --sizes 2^16,2^20 --repeat 5
  run 90 "wgpu: bench msm-g1 2^20" crucible bench --backend wgpu --op msm-g1 --sizes 2^20 --repeat 5
fi
cat "$log"
