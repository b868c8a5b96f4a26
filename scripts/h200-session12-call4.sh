#!/usr/bin/env bash
# Twelfth session, H200 call 4: per-curve Fq limb widths on wgpu (G1 28-bit, G2 32-bit
# where the adapter has 64-bit integers), issue 18's rows with cuda in the same bench
# calls, conformance after the change.
#   bash .device/on-device.sh bash .device/h200-session12-call4.sh
set -uo pipefail
log=$OUT/call4.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_WGPU_CACHE=/tmp/wgpu-pipelines
export __GL_SHADER_DISK_CACHE=0
B="crucible bench --backend cuda,wgpu"
run 60 "cuda,wgpu: msm-g2 2^20 (wgpu g2 32-bit limbs)" env RUST_LOG=warn,crucible_backend_wgpu=info $B --op msm-g2 --sizes 2^20 --repeat 5
run 60 "cuda,wgpu: msm-g1 2^20 (wgpu g1 28-bit limbs)" $B --op msm-g1 --sizes 2^20 --repeat 5
run 60 "cuda,wgpu: ntt 2^20,2^24" $B --op ntt --sizes 2^20,2^24 --repeat 5
run 90 "cuda,wgpu: prove 2^20 synthetic key" $B --op prove --sizes 2^20 --repeat 3 --synthetic-key
run 150 "conformance --backend wgpu --max-log-size 20" crucible conformance --backend wgpu --max-log-size 20
run 120 "conformance --backend all" crucible conformance --backend all
cat "$log"
