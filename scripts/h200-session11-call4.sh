#!/usr/bin/env bash
# Eleventh session, H200 call 4: the wgpu pipelines of an MSM (and of an NTT) compiled
# concurrently on a cold start (Context::prepare), against the sum of call 3's one at a
# time; the first proof's compile; conformance after the change.
#   bash .device/on-device.sh bash .device/h200-session11-call4.sh
set -uo pipefail
log=$OUT/call4.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys __GL_SHADER_DISK_CACHE=0
I="env RUST_LOG=warn,crucible_backend_wgpu=info"
run 120 "cold pipelines (empty cache): bench prove 2^16 synthetic key" \
  env CRUCIBLE_WGPU_CACHE=/tmp/cold1 $I crucible bench --backend wgpu --op prove --sizes 2^16 --repeat 1 --synthetic-key
run 60 "warm pipeline cache: bench prove 2^16 synthetic key" \
  env CRUCIBLE_WGPU_CACHE=/tmp/cold1 $I crucible bench --backend wgpu --op prove --sizes 2^16 --repeat 1 --synthetic-key
export CRUCIBLE_WGPU_CACHE=/tmp/cold1
run 240 "conformance --backend wgpu --max-log-size 20" crucible conformance --backend wgpu --max-log-size 20
run 120 "conformance --backend all" crucible conformance --backend all
cat "$log"
