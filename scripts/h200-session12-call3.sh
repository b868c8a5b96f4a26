#!/usr/bin/env bash
# Twelfth session, H200 call 3: the wgpu MSM's scratch kept in the lease between MSMs,
# measured (cuda and wgpu in the same bench calls), conformance after it (wgpu at 2^20,
# every backend with e4 back as the CUDA NTT's default), where a wgpu proof's time goes.
#   bash .device/on-device.sh bash .device/h200-session12-call3.sh
set -uo pipefail
log=$OUT/call3.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_WGPU_CACHE=/tmp/wgpu-pipelines
export __GL_SHADER_DISK_CACHE=0
B="crucible bench --backend cuda,wgpu"
run 60 "cuda,wgpu: msm-g1 2^20 (kept scratch)" $B --op msm-g1 --sizes 2^20 --repeat 5
run 60 "cuda,wgpu: msm-g2 2^20 (kept scratch)" $B --op msm-g2 --sizes 2^20 --repeat 5
run 30 "wgpu msm-g1 2^20 profiled (host phases)" env CRUCIBLE_WGPU_PROFILE=1 crucible bench --backend wgpu --op msm-g1 --sizes 2^20 --repeat 2
run 90 "cuda,wgpu: prove 2^20 synthetic key" $B --op prove --sizes 2^20 --repeat 3 --synthetic-key
run 60 "wgpu: prove 2^20 synthetic key, 2 proofs (phases)" crucible prove --backend wgpu --constraints 2^20 --proofs 2 --synthetic-key
run 150 "conformance --backend wgpu --max-log-size 20" crucible conformance --backend wgpu --max-log-size 20
run 120 "conformance --backend all" crucible conformance --backend all
cat "$log"
