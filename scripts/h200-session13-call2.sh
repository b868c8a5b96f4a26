#!/usr/bin/env bash
# Thirteenth session, H200 call 2 (issue 18): the wgpu NTT two stages a round
# (tile_stages4) against one (CRUCIBLE_WGPU_NTT_RADIX=2), cuda in the same bench calls;
# the first-proof compile with the reduction's per-curve default (two cold runs);
# proofs at 2^20; the CUDA e4 NTT's lazy product against the eager one (issue 17).
#   bash .device/on-device.sh bash .device/h200-session13-call2.sh
set -uo pipefail
log=$OUT/call2.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys RUST_LOG=info
export __GL_SHADER_DISK_CACHE=0
P="crucible prove --backend wgpu --constraints 2^16 --proofs 2 --synthetic-key"
run 90 "wgpu cold pipelines (per-curve reduction), run 1" env CRUCIBLE_WGPU_CACHE=/tmp/wp-a $P
run 90 "wgpu cold pipelines (per-curve reduction), run 2" env CRUCIBLE_WGPU_CACHE=/tmp/wp-b $P
export CRUCIBLE_WGPU_CACHE=/tmp/wp-a
B="crucible bench --backend cuda,wgpu"
run 90 "cuda,wgpu: ntt 2^20,2^24 (wgpu radix 4)" $B --op ntt --sizes 2^20,2^24 --repeat 7
run 90 "wgpu: ntt 2^20,2^24 (radix 2)" env CRUCIBLE_WGPU_NTT_RADIX=2 crucible bench --backend wgpu --op ntt --sizes 2^20,2^24 --repeat 7
run 30 "wgpu ntt 2^20 profiled (radix 4)" env CRUCIBLE_WGPU_PROFILE=1 crucible bench --backend wgpu --op ntt --sizes 2^20 --repeat 1
run 30 "wgpu ntt 2^20 profiled (radix 2)" env CRUCIBLE_WGPU_PROFILE=1 CRUCIBLE_WGPU_NTT_RADIX=2 crucible bench --backend wgpu --op ntt --sizes 2^20 --repeat 1
run 120 "cuda,wgpu: prove 2^20 synthetic key" $B --op prove --sizes 2^20 --repeat 3 --synthetic-key
run 60 "wgpu: prove 2^20 synthetic key, 3 proofs (phases)" crucible prove --backend wgpu --constraints 2^20 --proofs 3 --synthetic-key
C="crucible bench --backend cuda --op ntt --sizes 2^20,2^24 --repeat 7"
# The eager form is not embedded: NVRTC compiles it at its first use, outside the timing.
run 120 "cuda ntt: eager warm-up (compile)" env CRUCIBLE_CUDA_NVRTC_OPTIONS=-DCRU_NTT_EAGER crucible bench --backend cuda --op ntt --sizes 2^10 --repeat 1
for round in 1 2; do
  run 60 "cuda ntt 2^20,2^24 lazy (default), round $round" $C
  run 60 "cuda ntt 2^20,2^24 eager (-DCRU_NTT_EAGER), round $round" env CRUCIBLE_CUDA_NVRTC_OPTIONS=-DCRU_NTT_EAGER $C
done
cat "$log"
