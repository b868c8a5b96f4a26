#!/usr/bin/env bash
# Ninth session, H200 call 3: issue 17's table against sppark in the same call, then
# issue 18's wgpu work (form per curve, G2's registers form compile time, the pipeline
# cache, the workgroup NTT, the MSM's signed digits and XYZZ with per-pass GPU times)
# (conformance on every backend follows in call 4).
#   bash .device/on-device.sh bash .device/h200-session9-call3.sh
# with .device/sppark copied from ../shared/peers/sppark.
set -uo pipefail
log=$OUT/call3.log
run() { # run LIMIT_S LABEL COMMAND...
  local limit=$1 label=$2; shift 2
  echo "=== $label" >>"$log"
  local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "--- exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"
}
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_CUDA_CACHE=/tmp/cubin
export __GL_SHADER_DISK_CACHE=0
# Call 2's rows that its script asked for wrongly (two ops in one --op, --repeat twice).
C="crucible bench --backend cuda"
old="CRUCIBLE_CUDA_MSM_FOLD=levels CRUCIBLE_CUDA_MSM_ONES_SUM=tree CRUCIBLE_CUDA_MSM_SEG_BITS=3"
for knobs in "CRUCIBLE_CUDA_MSM_FOLD=tree" "$old"; do
  for op in msm-g1 msm-g2; do
    for mix in bits=0.9 bits=0.99; do
      run 40 "[$knobs] cuda: bench $op 2^20 $mix" env $knobs $C --repeat 7 --op $op --sizes 2^20 --scalars $mix
    done
  done
done
run 40 "[$old] cuda: bench msm-g1 2^20 full" env $old $C --repeat 7 --op msm-g1 --sizes 2^20
run 60 "cuda: bench prove 2^20 synthetic key" $C --op prove --sizes 2^20 --repeat 5 --synthetic-key
run 60 "ncu per-kernel times: msm-g1 2^20 bits=0.99" ncu --clock-control none \
  --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
  $C --op msm-g1 --sizes 2^20 --repeat 1 --scalars bits=0.99
run 200 "sppark peer harness" bash .device/sppark/run-on-device.sh
B="crucible bench --repeat 7"
run 60 "cuda: bench msm-g1 2^20,2^24" $B --backend cuda --op msm-g1 --sizes 2^20,2^24
run 30 "cuda: bench msm-g2 2^20" $B --backend cuda --op msm-g2 --sizes 2^20
run 30 "cuda: bench ntt 2^20,2^24" $B --backend cuda --op ntt --sizes 2^20,2^24
W="crucible bench --backend wgpu --repeat 5"
RUST_LOG=warn,crucible_backend_wgpu=info CRUCIBLE_WGPU_CACHE=/tmp/wgpu-pipelines run 150 \
  "wgpu defaults (g1 straight, g2 interpreted), cold pipeline cache: bench msm-g1 2^16,2^20" \
  $W --op msm-g1 --sizes 2^16,2^20
RUST_LOG=warn,crucible_backend_wgpu=info CRUCIBLE_WGPU_CACHE=/tmp/wgpu-pipelines run 100 \
  "wgpu defaults, warm pipeline cache: bench msm-g1 2^16" $W --op msm-g1 --sizes 2^16
CRUCIBLE_WGPU_PROFILE=1 run 100 "wgpu defaults, profiled: bench msm-g1 2^20" \
  crucible bench --backend wgpu --repeat 2 --op msm-g1 --sizes 2^20
CRUCIBLE_WGPU_MSM_DIGITS=unsigned CRUCIBLE_WGPU_MSM_BUCKETS=projective run 100 \
  "wgpu g1 straight, old digits and buckets: bench msm-g1 2^16,2^20" $W --op msm-g1 --sizes 2^16,2^20
RUST_LOG=warn,crucible_backend_wgpu=info CRUCIBLE_WGPU_CACHE= CRUCIBLE_WGPU_FORMULAS=g1=straight,g2=registers \
  run 150 "wgpu g2=registers, cold: bench msm-g2 2^16,2^20" $W --op msm-g2 --sizes 2^16,2^20
run 100 "wgpu g2 interpreted: bench msm-g2 2^16,2^20" $W --op msm-g2 --sizes 2^16,2^20
for ntt in workgroup passes; do
  CRUCIBLE_WGPU_NTT=$ntt run 90 "wgpu NTT=$ntt: bench ntt 2^16,2^20,2^24" $W --op ntt --sizes 2^16,2^20,2^24
done

cat "$log"
