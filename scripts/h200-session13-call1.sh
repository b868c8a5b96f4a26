#!/usr/bin/env bash
# Thirteenth session, H200 call 1 (issue 18): staging through kept upload buffers (the
# proof's stage phase), the lean values-form reduction (compile and run time against
# the cached one), the warm-up at key staging (first-proof compile), conformance.
#   bash .device/on-device.sh bash .device/h200-session13-call1.sh
set -uo pipefail
log=$OUT/call1.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys RUST_LOG=info
export __GL_SHADER_DISK_CACHE=0
P="crucible prove --backend wgpu --constraints 2^16 --proofs 2 --synthetic-key"
run 90 "wgpu cold pipelines, lean reduce (warm-up at key staging)" env CRUCIBLE_WGPU_CACHE=/tmp/wp-lean $P
run 90 "wgpu cold pipelines, cached reduce" env CRUCIBLE_WGPU_CACHE=/tmp/wp-cached CRUCIBLE_WGPU_MSM_REDUCE=cached $P
run 30 "wgpu from the pipeline cache, lean" env CRUCIBLE_WGPU_CACHE=/tmp/wp-lean $P
export CRUCIBLE_WGPU_CACHE=/tmp/wp-lean
B="crucible bench --backend cuda,wgpu"
run 60 "cuda,wgpu: msm-g1 2^20 (lean reduce)" $B --op msm-g1 --sizes 2^20 --repeat 5
run 60 "wgpu: msm-g1 2^20 (cached reduce)" env CRUCIBLE_WGPU_CACHE=/tmp/wp-cached CRUCIBLE_WGPU_MSM_REDUCE=cached crucible bench --backend wgpu --op msm-g1 --sizes 2^20 --repeat 5
run 60 "cuda,wgpu: msm-g2 2^20 (lean reduce)" $B --op msm-g2 --sizes 2^20 --repeat 5
run 60 "wgpu: msm-g2 2^20 (cached reduce)" env CRUCIBLE_WGPU_CACHE=/tmp/wp-cached CRUCIBLE_WGPU_MSM_REDUCE=cached crucible bench --backend wgpu --op msm-g2 --sizes 2^20 --repeat 5
run 30 "wgpu msm-g1 2^20 profiled" env CRUCIBLE_WGPU_PROFILE=1 crucible bench --backend wgpu --op msm-g1 --sizes 2^20 --repeat 2
run 120 "cuda,wgpu: prove 2^20 synthetic key" $B --op prove --sizes 2^20 --repeat 3 --synthetic-key
run 90 "wgpu: prove 2^20 synthetic key, 3 proofs (phases)" crucible prove --backend wgpu --constraints 2^20 --proofs 3 --synthetic-key
run 60 "wgpu: prove 2^20, upload buffers of 64 MiB" env CRUCIBLE_WGPU_UPLOAD_MIB=64 crucible prove --backend wgpu --constraints 2^20 --proofs 3 --synthetic-key
if [ -f "$(dirname "$0")/lazy-ntt" ]; then
  for v in "" "-DCRU_NTT_EAGER"; do
    run 60 "cuda ntt 2^20,2^24 options '$v'" env CRUCIBLE_CUDA_NVRTC_OPTIONS="$v" crucible bench --backend cuda --op ntt --sizes 2^20,2^24 --repeat 7
  done
fi
run 180 "conformance --backend wgpu --max-log-size 20" crucible conformance --backend wgpu --max-log-size 20
run 120 "conformance --backend all" crucible conformance --backend all
cat "$log"
