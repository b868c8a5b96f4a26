#!/usr/bin/env bash
# Thirteenth session, H200 call 3: the wgpu proof with the scratch created once a
# proof (issue 18), then issue 17's table against sppark 0.1.16 in the same call.
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session13-call3.sh
set -uo pipefail
log=$OUT/call3.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_WGPU_CACHE=/tmp/wgpu-pipelines
export __GL_SHADER_DISK_CACHE=0
B="crucible bench --backend cuda,wgpu"
run 120 "cuda,wgpu: prove 2^20 synthetic key" $B --op prove --sizes 2^20 --repeat 5 --synthetic-key
run 60 "wgpu: prove 2^20 synthetic key, 3 proofs (phases)" crucible prove --backend wgpu --constraints 2^20 --proofs 3 --synthetic-key
run 240 "sppark 0.1.16 peer (g1:20 g1:24 g2:20 ntt:20 ntt:24, median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh"
C="crucible bench --backend cuda"
run 60 "cuda: ntt 2^20,2^24" $C --op ntt --sizes 2^20,2^24 --repeat 7
run 120 "cuda: msm-g1 2^20,2^24" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 60 "cuda: msm-g2 2^20" $C --op msm-g2 --sizes 2^20 --repeat 7
cat "$log"
