#!/usr/bin/env bash
# Ninth session, H200 call 2: the CUDA helpers' work merged (NVRTC in 22 programs, the
# MSM tails, the NTT tile changes): cold compile, conformance, then each knob's A/B,
# the proof. From the project root on the device:
#   bash .device/on-device.sh bash .device/h200-session9-call2.sh
# with `crucible`, `test-device` and `test-crucible_backend_cuda` in .device/bin.
set -uo pipefail
log=$OUT/call2.log
run() { # run LIMIT_S LABEL COMMAND...
  local limit=$1 label=$2; shift 2
  echo "=== $label" >>"$log"
  local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "--- exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"
}
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_CUDA_CACHE=/tmp/cubin
echo "cores: $(nproc); $(lscpu | grep -E '^(Thread|Core|Socket)' | tr -s ' ' | paste -sd ';')" >>"$log"
CRUCIBLE_CUDA_CACHE= RUST_LOG=warn,crucible_backend_cuda=info run 120 "cold compile (22 programs, no cache)" \
  crucible conformance --backend cuda --max-log-size 3 --filter ntt/forward/2^3
run 200 "conformance --backend cuda --max-log-size 20" crucible conformance --backend cuda --max-log-size 20
old="CRUCIBLE_CUDA_MSM_FOLD=levels CRUCIBLE_CUDA_MSM_ONES_SUM=tree CRUCIBLE_CUDA_MSM_SEG_BITS=3"
for knobs in "$old" "CRUCIBLE_CUDA_MSM_ONES_SUM=groups"; do
  run 100 "conformance msm, $knobs" env $knobs crucible conformance --backend cuda --max-log-size 20 --filter msm
done
CRUCIBLE_CUDA_NTT=shared-e2 run 60 "conformance ntt, CRUCIBLE_CUDA_NTT=shared-e2" \
  crucible conformance --backend cuda --max-log-size 20 --filter ntt
CRUCIBLE_REQUIRE=cuda run 100 "device tests" .device/bin/test-device --test-threads=1
run 60 "cuda lib tests" .device/bin/test-crucible_backend_cuda
B="crucible bench --backend cuda"
R="--repeat 7"
run 60 "bench msm-g1 2^20,2^24 (defaults)" $B --op msm-g1 --sizes 2^20,2^24
run 60 "bench msm-g2 2^20 (defaults)" $B --op msm-g2 --sizes 2^20
for mix in bits=0.9 bits=0.99; do
  run 60 "bench msm-g1,msm-g2 2^20 $mix (defaults)" $B $R --op msm-g1 --sizes 2^20 --scalars $mix
done
run 60 "[$old] bench msm-g1 2^20" env $old $B --op msm-g1,msm-g2 --sizes 2^20
for mix in bits=0.9 bits=0.99; do
  run 60 "[$old] bench msm-g1,msm-g2 2^20 $mix" env $old $B $R --op msm-g1 --sizes 2^20 --scalars $mix
done
run 60 "[CRUCIBLE_CUDA_MSM_ONES_SUM=groups] bench msm-g1 2^20 bits=0.99" \
  env CRUCIBLE_CUDA_MSM_ONES_SUM=groups $B --op msm-g1 --sizes 2^20 --scalars bits=0.99
for ntt in shared shared-e2; do
  CRUCIBLE_CUDA_NTT=$ntt run 60 "NTT=$ntt bench ntt 2^16,2^20,2^24" $B --op ntt --sizes 2^16,2^20,2^24
done
CRUCIBLE_CUDA_NVRTC_OPTIONS="-DCRU_NTT_NARROW_MUL -DCRU_NTT_NO_PREFETCH" run 90 \
  "NTT shared with the old product and no prefetch: bench ntt 2^20,2^24" $B --op ntt --sizes 2^20,2^24
CRUCIBLE_CUDA_NVRTC_OPTIONS="-DCRU_RARE_DOUBLE_CALLS=0 -DCRU_ONES_TREE_CALLS=0" run 90 \
  "inlined rare doublings and 0/1 tree: bench msm-g1 2^20 full and bits=0.99" \
  bash -c "$B --op msm-g1 --sizes 2^20 && $B --op msm-g1 --sizes 2^20 --scalars bits=0.99"
run 90 "bench prove 2^20 synthetic key" $B --op prove --sizes 2^20 --repeat 5 --synthetic-key
run 150 "prove 2^20 --check --proofs 4" crucible prove --backend cuda --constraints 2^20 --check --proofs 4
nc="ncu --clock-control none --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed"
for mix in full bits=0.99; do
  run 120 "ncu per-kernel times: msm-g1 2^20 $mix" $nc $B --op msm-g1 --sizes 2^20 --repeat 1 --scalars $mix
done
run 60 "ncu: ntt_tile 2^20 (shared)" ncu --clock-control none -k regex:ntt_tile --launch-count 3 \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
  $B --op ntt --sizes 2^20 --repeat 1
cat "$log"
