#!/usr/bin/env bash
# Twelfth session, H200 call 1 (issue 18): the wgpu NTT's wide Fr product (u64 columns,
# SHADER_INT64) against the unrolled 16-bit one, the straight Fq code over wide limbs
# (32, 30, 28 bits in u64) against 15-bit u32 limbs for MSM G1 and G2 at 2^20, cuda in
# the same bench calls; then conformance --backend wgpu at 2^20 with the wide NTT.
#   bash .device/on-device.sh bash .device/h200-session12-call1.sh
set -uo pipefail
log=$OUT/call1.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_WGPU_CACHE=/tmp/wgpu-pipelines
export __GL_SHADER_DISK_CACHE=0
B="crucible bench --backend cuda,wgpu"
run 90 "cuda,wgpu: ntt 2^20,2^24 (wgpu default: wide product)" $B --op ntt --sizes 2^20,2^24 --repeat 5
run 60 "wgpu ntt, unrolled 16-bit product" env CRUCIBLE_WGPU_NTT_MUL=unrolled \
  crucible bench --backend wgpu --op ntt --sizes 2^20,2^24 --repeat 5
run 30 "wgpu ntt 2^20 wide, profiled" env CRUCIBLE_WGPU_PROFILE=1 \
  crucible bench --backend wgpu --op ntt --sizes 2^20 --repeat 1
run 90 "cuda,wgpu: msm-g1 2^20 (15-bit limbs)" $B --op msm-g1 --sizes 2^20 --repeat 5
for bits in 32 30 28; do
  run 90 "wgpu msm-g1 2^20, $bits-bit limbs" env CRUCIBLE_WGPU_LIMB_BITS=$bits RUST_LOG=warn,crucible_backend_wgpu=info \
    crucible bench --backend wgpu --op msm-g1 --sizes 2^20 --repeat 5
done
run 30 "wgpu msm-g1 2^20, 32-bit limbs, profiled" env CRUCIBLE_WGPU_LIMB_BITS=32 CRUCIBLE_WGPU_PROFILE=1 \
  crucible bench --backend wgpu --op msm-g1 --sizes 2^20 --repeat 1
run 90 "cuda,wgpu: msm-g2 2^20 (15-bit limbs)" $B --op msm-g2 --sizes 2^20 --repeat 5
run 90 "wgpu msm-g2 2^20, 32-bit limbs" env CRUCIBLE_WGPU_LIMB_BITS=32 \
  crucible bench --backend wgpu --op msm-g2 --sizes 2^20 --repeat 5
run 240 "conformance --backend wgpu --max-log-size 20 (wide NTT)" crucible conformance --backend wgpu --max-log-size 20
cat "$log"
