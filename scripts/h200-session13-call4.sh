#!/usr/bin/env bash
# Thirteenth session, H200 call 4, on the session's final code: conformance (cuda at
# 2^20 after the kernel's revert, wgpu at 2^20, every backend) and one more cold
# first-proof compile sample.
#   bash .device/on-device.sh bash .device/h200-session13-call4.sh
set -uo pipefail
log=$OUT/call4.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys __GL_SHADER_DISK_CACHE=0
run 60 "wgpu cold pipelines, run 3" env RUST_LOG=crucible_backend_wgpu=info CRUCIBLE_WGPU_CACHE=/tmp/wp-c crucible prove --backend wgpu --constraints 2^16 --proofs 2 --synthetic-key
export CRUCIBLE_WGPU_CACHE=/tmp/wp-c
run 200 "conformance --backend cuda --max-log-size 20" crucible conformance --backend cuda --max-log-size 20
run 150 "conformance --backend wgpu --max-log-size 20" crucible conformance --backend wgpu --max-log-size 20
run 120 "conformance --backend all" crucible conformance --backend all
cat "$log"
