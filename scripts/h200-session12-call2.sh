#!/usr/bin/env bash
# Twelfth session, H200 call 2: issue 17's table against sppark in the same call (the
# CUDA NTT's ntt_tile_e8, default, against e4), issue 18's rows with 28-bit Fq limbs,
# where the wgpu MSM's wall time goes (host phases), proofs at 2^20 on both GPUs, and
# conformance: cuda at 2^20 after the kernel change, then every backend.
#   cp -r ../shared/peers/sppark .device/sppark
#   bash .device/on-device.sh bash .device/h200-session12-call2.sh
set -uo pipefail
log=$OUT/call2.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_WGPU_CACHE=/tmp/wgpu-pipelines
export __GL_SHADER_DISK_CACHE=0
run 150 "conformance --backend cuda --max-log-size 20 (ntt_tile_e8)" crucible conformance --backend cuda --max-log-size 20
run 240 "sppark 0.1.16 peer (g1:20 g1:24 g2:20 ntt:20 ntt:24, median of 7)" bash "$(dirname "$0")/sppark/run-on-device.sh"
C="crucible bench --backend cuda"
run 60 "cuda: ntt 2^20,2^24 (e8, default)" $C --op ntt --sizes 2^20,2^24 --repeat 7
run 60 "cuda: ntt 2^20,2^24 (e4: CRUCIBLE_CUDA_NTT=shared)" env CRUCIBLE_CUDA_NTT=shared $C --op ntt --sizes 2^20,2^24 --repeat 7
run 60 "cuda: ntt 2^20,2^24 (e8 capped at 96 registers: MIN_BLOCKS=5)" env CRUCIBLE_CUDA_NVRTC_OPTIONS=-DCRU_NTT_TILE8_MIN_BLOCKS=5 $C --op ntt --sizes 2^20,2^24 --repeat 7
run 90 "cuda: msm-g1 2^20,2^24" $C --op msm-g1 --sizes 2^20,2^24 --repeat 7
run 60 "cuda: msm-g2 2^20" $C --op msm-g2 --sizes 2^20 --repeat 7
B="crucible bench --backend cuda,wgpu"
run 60 "cuda,wgpu: msm-g1 2^20 (wgpu 28-bit limbs, default)" $B --op msm-g1 --sizes 2^20 --repeat 5
run 60 "cuda,wgpu: msm-g2 2^20 (wgpu 28-bit limbs, default)" $B --op msm-g2 --sizes 2^20 --repeat 5
run 30 "wgpu msm-g1 2^20 profiled (host phases)" env CRUCIBLE_WGPU_PROFILE=1 crucible bench --backend wgpu --op msm-g1 --sizes 2^20 --repeat 1
run 30 "wgpu msm-g2 2^20 profiled (host phases)" env CRUCIBLE_WGPU_PROFILE=1 crucible bench --backend wgpu --op msm-g2 --sizes 2^20 --repeat 1
run 150 "cuda,wgpu: prove 2^20 synthetic key" $B --op prove --sizes 2^20 --repeat 3 --synthetic-key
run 200 "conformance --backend all" crucible conformance --backend all
cat "$log"
