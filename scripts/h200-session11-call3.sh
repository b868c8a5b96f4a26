#!/usr/bin/env bash
# Eleventh session, H200 call 3: after the fitted window weights (G2 2^20: c = 13) and
# 15-bit Fq limbs, conformance on every backend and wgpu at 2^20, issue 18's rows again
# (cuda and wgpu in the same bench call), and the NTT's tile bits at 2^20 and 2^24.
#   bash .device/on-device.sh bash .device/h200-session11-call3.sh
set -uo pipefail
log=$OUT/call3.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_WGPU_CACHE=/tmp/wgpu-pipelines
export __GL_SHADER_DISK_CACHE=0
run 240 "conformance --backend wgpu --max-log-size 20 (cold pipelines, 15-bit limbs)" \
  env RUST_LOG=warn,crucible_backend_wgpu=info crucible conformance --backend wgpu --max-log-size 20
run 200 "conformance --backend all" crucible conformance --backend all
B="crucible bench --backend cuda,wgpu"
run 60 "cuda,wgpu: msm-g1 2^20" $B --op msm-g1 --sizes 2^20 --repeat 5
run 60 "cuda,wgpu: msm-g2 2^20" $B --op msm-g2 --sizes 2^20 --repeat 5
run 60 "wgpu profiled: msm-g2 2^20" env CRUCIBLE_WGPU_PROFILE=1 crucible bench --backend wgpu --op msm-g2 --sizes 2^20 --repeat 1
run 120 "cuda,wgpu: prove 2^20 synthetic key" $B --op prove --sizes 2^20 --repeat 3 --synthetic-key
for bits in 9 8 7; do
  run 60 "wgpu NTT tile bits $bits: 2^20, 2^24" env CRUCIBLE_WGPU_NTT_TILE_BITS=$bits \
    crucible bench --backend wgpu --op ntt --sizes 2^20,2^24 --repeat 5
done
cat "$log"
