#!/usr/bin/env bash
# Thirteenth session, H200 call 3 (issue 17): the table against sppark 0.1.16 in the
# same call (crucible with the lazy e4 NTT), then conformance: cuda at 2^20 after the
# kernel change, wgpu at 2^20 after call 2's NTT change, every backend.
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session13-call3.sh
set -uo pipefail
log=$OUT/call3.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_WGPU_CACHE=/tmp/wgpu-pipelines
export __GL_SHADER_DISK_CACHE=0
run 240 "sppark 0.1.16 peer (g1:20 g1:24 g2:20 ntt:20 ntt:24, median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh"
C="crucible bench --backend cuda"
run 60 "cuda: ntt 2^20,2^24" $C --op ntt --sizes 2^20,2^24 --repeat 7
run 120 "cuda: msm-g1 2^20,2^24" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 60 "cuda: msm-g2 2^20" $C --op msm-g2 --sizes 2^20 --repeat 7
run 150 "conformance --backend cuda --max-log-size 20" crucible conformance --backend cuda --max-log-size 20
run 150 "conformance --backend wgpu --max-log-size 20" crucible conformance --backend wgpu --max-log-size 20
run 120 "conformance --backend all" crucible conformance --backend all
cat "$log"
