#!/usr/bin/env bash
# Fourteenth session, H200 call 3: the wgpu NTT with the bit reversal in the tiles and
# no per-call buffers (issue 18's NTT row), proofs whose bases stream from the host
# (the next chunk staged while the device sums the current one), conformance on every
# backend after the session's changes.
#   bash .device/on-device.sh bash .device/h200-session14-call3.sh
set -uo pipefail
log=$OUT/call3.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys __GL_SHADER_DISK_CACHE=0 CRUCIBLE_WGPU_CACHE=/tmp/wp
run 60 "wgpu cold pipelines (warm-up)" env RUST_LOG=crucible_backend_wgpu=info crucible prove --backend wgpu --constraints 2^16 --proofs 2 --synthetic-key
run 60 "wgpu ntt 2^20 profile" env CRUCIBLE_WGPU_PROFILE=1 crucible bench --backend wgpu --op ntt --sizes 2^20 --repeat 2
run 90 "cuda,wgpu: ntt 2^20,2^24" crucible bench --backend cuda,wgpu --op ntt --sizes 2^20,2^24 --repeat 7
run 120 "cuda,wgpu: prove 2^20 synthetic key" crucible bench --backend cuda,wgpu --op prove --sizes 2^20 --repeat 5 --synthetic-key
run 120 "cuda,wgpu: msm-g1 2^20, msm-g2 2^20" bash -c 'crucible bench --backend cuda,wgpu --op msm-g1 --sizes 2^20 --repeat 5; crucible bench --backend cuda,wgpu --op msm-g2 --sizes 2^20 --repeat 5'
run 150 "cuda: 2^24 synthetic key, --memory-limit 6GiB (every query streamed)" crucible prove --backend cuda --constraints 2^24 --proofs 2 --synthetic-key --synthesis-threads 8 --memory-limit 6GiB
run 60 "cuda: 2^20 --check --memory-limit 400MiB (bases streamed)" crucible prove --backend cuda --constraints 2^20 --proofs 2 --check --memory-limit 400MiB
run 150 "conformance --backend all" crucible conformance --backend all
run 150 "conformance --backend cuda --max-log-size 20" crucible conformance --backend cuda --max-log-size 20
run 150 "conformance --backend wgpu --max-log-size 20" crucible conformance --backend wgpu --max-log-size 20
cat "$log"
