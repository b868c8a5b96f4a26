#!/usr/bin/env bash
# Fourteenth session, H200 call 2: the pipelined one-shot MSM (HostMsm) and the
# 32 MiB CUDA staging chunks against sppark 0.1.16 in the same call (issue 17's
# "+transfers" rows); the G1 reduction in the registers form (issue 18's compile row).
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session14-call2.sh
set -uo pipefail
log=$OUT/call2.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys __GL_SHADER_DISK_CACHE=0
run 60 "wgpu cold pipelines (warm-up), G1 reduce registers" env CRUCIBLE_WGPU_CACHE=/tmp/wp1 RUST_LOG=crucible_backend_wgpu=info crucible prove --backend wgpu --constraints 2^16 --proofs 2 --synthetic-key
run 60 "wgpu msm-g1 2^20 profile" env CRUCIBLE_WGPU_CACHE=/tmp/wp1 CRUCIBLE_WGPU_PROFILE=1 crucible bench --backend wgpu --op msm-g1 --sizes 2^20 --repeat 1
run 120 "cuda,wgpu: msm-g1 2^20, msm-g2 2^20" env CRUCIBLE_WGPU_CACHE=/tmp/wp1 crucible bench --backend cuda,wgpu --op msm-g1 --sizes 2^20 --repeat 5
run 120 "cuda,wgpu: prove 2^20 synthetic key" env CRUCIBLE_WGPU_CACHE=/tmp/wp1 crucible bench --backend cuda,wgpu --op prove --sizes 2^20 --repeat 5 --synthetic-key
run 60 "wgpu cold pipelines (warm-up) again, fresh cache" env CRUCIBLE_WGPU_CACHE=/tmp/wp2 RUST_LOG=crucible_backend_wgpu=info crucible prove --backend wgpu --constraints 2^16 --proofs 1 --synthetic-key
run 240 "sppark 0.1.16 peer (g1:20 g1:24 g2:20 ntt:20 ntt:24, median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh"
C="crucible bench --backend cuda"
run 60 "cuda: ntt 2^20,2^24" $C --op ntt --sizes 2^20,2^24 --repeat 7
run 150 "cuda: msm-g1 2^20,2^22,2^24" $C --op msm-g1 --sizes 2^20,2^22,2^24 --repeat 7
run 60 "cuda: msm-g2 2^20" $C --op msm-g2 --sizes 2^20 --repeat 7
run 120 "conformance cuda,wgpu: one-shot, streamed, schedules, stage" bash -c 'for b in cuda wgpu; do for f in one-shot streamed schedules stage/; do crucible conformance --backend $b --filter $f | tail -2; done; done'
cat "$log"
