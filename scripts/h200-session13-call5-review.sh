#!/usr/bin/env bash
# Thirteenth session, H200 call 5, after the review's mend: conformance on every
# backend, the wgpu one at 2^20, one warm-up from a cold pipeline cache.
#   bash .device/on-device.sh bash .device/h200-session13-call5-review.sh
set -uo pipefail
log=$OUT/call5.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys __GL_SHADER_DISK_CACHE=0 CRUCIBLE_WGPU_CACHE=/tmp/wp
run 60 "wgpu cold pipelines (warm-up)" env RUST_LOG=crucible_backend_wgpu=info crucible prove --backend wgpu --constraints 2^16 --proofs 2 --synthetic-key
run 120 "conformance --backend all" crucible conformance --backend all
run 120 "conformance --backend wgpu --max-log-size 20" crucible conformance --backend wgpu --max-log-size 20
cat "$log"
