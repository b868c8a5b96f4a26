#!/usr/bin/env bash
# Eleventh session, H200 call 2 (issue 18): where the wgpu NTT's time goes (per-pass
# GPU times, now printed for NTTs too) and its knobs; the MSM window swept (the new
# CRUCIBLE_WGPU_MSM_WINDOW_BITS) with per-phase GPU times, to fit the cost model's
# weights; the Fq limb width (CRUCIBLE_WGPU_LIMB_BITS 13/15/16, never measured on the
# H200); then issue 18's table rows with cuda and wgpu in the same bench call.
#   bash .device/on-device.sh bash .device/h200-session11-call2.sh
set -uo pipefail
log=$OUT/call2.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_WGPU_CACHE=/tmp/wgpu-pipelines
export __GL_SHADER_DISK_CACHE=0
W="crucible bench --backend wgpu"
P="env CRUCIBLE_WGPU_PROFILE=1"
run 60 "wgpu NTT profiled, default: 2^20" $P $W --op ntt --sizes 2^20 --repeat 1
run 60 "wgpu NTT profiled, default: 2^24" $P $W --op ntt --sizes 2^24 --repeat 1
for knob in CRUCIBLE_WGPU_NTT_TILE_BITS=8 CRUCIBLE_WGPU_NTT_TILE_BITS=7 CRUCIBLE_WGPU_NTT_MUL=loop; do
  run 60 "wgpu NTT [$knob]: 2^20 (then profiled)" env $knob $W --op ntt --sizes 2^20 --repeat 5
  run 60 "wgpu NTT [$knob] profiled: 2^20" env $knob $P $W --op ntt --sizes 2^20 --repeat 1
done
for c in 16 15 14 13 12; do
  run 60 "wgpu MSM G1 c=$c: 2^20" env CRUCIBLE_WGPU_MSM_WINDOW_BITS=$c $W --op msm-g1 --sizes 2^20 --repeat 5
  run 60 "wgpu MSM G1 c=$c profiled: 2^20" env CRUCIBLE_WGPU_MSM_WINDOW_BITS=$c $P $W --op msm-g1 --sizes 2^20 --repeat 1
done
for c in 15 14 13; do
  run 60 "wgpu MSM G2 c=$c profiled: 2^20" env CRUCIBLE_WGPU_MSM_WINDOW_BITS=$c $P $W --op msm-g2 --sizes 2^20 --repeat 1
done
for b in 16 15; do
  run 120 "wgpu MSM G1 limbs $b bits (cold pipelines): 2^20" env CRUCIBLE_WGPU_LIMB_BITS=$b RUST_LOG=warn,crucible_backend_wgpu=info \
    $W --op msm-g1 --sizes 2^20 --repeat 5
  run 60 "wgpu MSM G1 limbs $b bits profiled: 2^20" env CRUCIBLE_WGPU_LIMB_BITS=$b $P $W --op msm-g1 --sizes 2^20 --repeat 1
done
B="crucible bench --backend cuda,wgpu"
run 60 "cuda,wgpu: msm-g1 2^20" $B --op msm-g1 --sizes 2^20 --repeat 5
run 60 "cuda,wgpu: msm-g2 2^20" $B --op msm-g2 --sizes 2^20 --repeat 5
run 60 "cuda,wgpu: ntt 2^20,2^24" $B --op ntt --sizes 2^20,2^24 --repeat 5
run 120 "cuda,wgpu: prove 2^20 synthetic key" $B --op prove --sizes 2^20 --repeat 3 --synthetic-key
cat "$log"
