#!/usr/bin/env bash
# Fourteenth session, H200 call 1 (measurements only, the thirteenth session's final
# binaries): issue 18's compile row by G1 form (cold pipelines a form, the MSM's run
# time beside them), issue 17's "+transfers" rows by staging chunk size.
#   bash .device/on-device.sh bash .device/h200-session14-call1.sh
set -uo pipefail
log=$OUT/call1.log
. "$(dirname "$0")/h200-lib.sh"
export CRUCIBLE_CACHE_DIR=/tmp/keys __GL_SHADER_DISK_CACHE=0
W="crucible bench --backend wgpu --op msm-g1 --sizes 2^20 --repeat 5"
for cfg in "g1=straight" "g1=registers" "g1=registers REDUCE=lean" "g1=compact"; do
  form=${cfg%% *}; reduce=""; [[ $cfg == *REDUCE=* ]] && reduce=${cfg##*REDUCE=}
  run 120 "wgpu msm-g1 2^20, $cfg, cold pipelines" env CRUCIBLE_WGPU_FORMULAS=$form \
    ${reduce:+CRUCIBLE_WGPU_MSM_REDUCE=$reduce} CRUCIBLE_WGPU_CACHE=/tmp/wp-${form#g1=}$reduce \
    RUST_LOG=crucible_backend_wgpu::context=info $W
done
run 60 "wgpu msm-g1 2^20 g1=registers, profile" env CRUCIBLE_WGPU_FORMULAS=g1=registers CRUCIBLE_WGPU_CACHE=/tmp/wp-registers CRUCIBLE_WGPU_PROFILE=1 crucible bench --backend wgpu --op msm-g1 --sizes 2^20 --repeat 1
run 60 "wgpu msm-g1 2^20 g1=straight, profile" env CRUCIBLE_WGPU_CACHE=/tmp/wp-straight CRUCIBLE_WGPU_PROFILE=1 crucible bench --backend wgpu --op msm-g1 --sizes 2^20 --repeat 1
run 60 "wgpu warm-up, g1=registers, cold" env CRUCIBLE_WGPU_FORMULAS=g1=registers CRUCIBLE_WGPU_CACHE=/tmp/wp-warm RUST_LOG=crucible_backend_wgpu=info crucible prove --backend wgpu --constraints 2^16 --proofs 2 --synthetic-key
run 120 "wgpu prove 2^20, g1=registers" env CRUCIBLE_WGPU_FORMULAS=g1=registers CRUCIBLE_WGPU_CACHE=/tmp/wp-warm crucible bench --backend wgpu --op prove --sizes 2^20 --repeat 3 --synthetic-key
for mib in 8 32 64; do
  run 60 "cuda ntt +transfers, staging $mib MiB" env CRUCIBLE_CUDA_STAGING_MIB=$mib crucible bench --backend cuda --op ntt --sizes 2^20,2^24 --repeat 7
  run 90 "cuda msm-g1 2^24 +transfers, staging $mib MiB" env CRUCIBLE_CUDA_STAGING_MIB=$mib crucible bench --backend cuda --op msm-g1 --sizes 2^22,2^24 --repeat 5
done
run 90 "cuda msm-g1 2^24, staging 32 MiB cached" env CRUCIBLE_CUDA_STAGING_MIB=32 CRUCIBLE_CUDA_STAGING_CACHED=1 crucible bench --backend cuda --op msm-g1 --sizes 2^24 --repeat 5
run 90 "cuda msm-g1 2^21..2^24 planes never (plain MSM times)" env CRUCIBLE_CUDA_MSM_PLANES=1 crucible bench --backend cuda --op msm-g1 --sizes 2^20,2^21,2^22,2^23,2^24 --repeat 5
cat "$log"
