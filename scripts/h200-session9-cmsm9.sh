#!/usr/bin/env bash
# Ninth session, branch s9-cmsm9: the MSM's tails (issue 17). Conformance with the new
# defaults and with each old path, then each knob's A/B in one call, then ncu
# per-kernel times of the rows the prediction (BENCHMARKS.md, "the MSM's tails") names.
#   bash .device/on-device.sh bash scripts/h200-session9-cmsm9.sh
# with `crucible`, `test-device` and `test-crucible_backend_cuda` in .device/bin.
set -uo pipefail
log=$OUT/cmsm9.log
run() { # run LIMIT_S LABEL COMMAND...
  local limit=$1 label=$2; shift 2
  echo "=== $label" >>"$log"
  local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "--- exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"
}
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_CUDA_CACHE=/tmp/cubin
run 240 "conformance --backend cuda --max-log-size 20 (new defaults)" \
  crucible conformance --backend cuda --max-log-size 20
# The MSM cases on each old path (and planes built, the prover's case).
for knobs in "CRUCIBLE_CUDA_MSM_FOLD=levels" "CRUCIBLE_CUDA_MSM_ONES_SUM=groups" \
    "CRUCIBLE_CUDA_MSM_ONES_SUM=tree" "CRUCIBLE_CUDA_MSM_SEG_BITS=3" "CRUCIBLE_CUDA_MSM_PLANES_BUILD=eager"; do
  run 150 "conformance msm, $knobs" env $knobs crucible conformance --backend cuda --max-log-size 20 --filter msm
done
CRUCIBLE_REQUIRE=cuda run 150 "device tests" .device/bin/test-device --test-threads=1
run 60 "cuda lib tests" .device/bin/test-crucible_backend_cuda
old="CRUCIBLE_CUDA_MSM_FOLD=levels CRUCIBLE_CUDA_MSM_ONES_SUM=tree CRUCIBLE_CUDA_MSM_SEG_BITS=3"
for knobs in "CRUCIBLE_CUDA_MSM_FOLD=tree" "$old"; do
  run 90 "[$knobs] bench msm-g1 2^20,2^24" env $knobs \
    crucible bench --backend cuda --op msm-g1 --sizes 2^20,2^24 --repeat 7
  run 60 "[$knobs] bench msm-g2 2^20" env $knobs \
    crucible bench --backend cuda --op msm-g2 --sizes 2^20 --repeat 7
done
# The bit-heavy rows, each change alone against the new defaults.
for knobs in "CRUCIBLE_CUDA_MSM_FOLD=tree" "$old" "CRUCIBLE_CUDA_MSM_ONES_SUM=groups" \
    "CRUCIBLE_CUDA_MSM_ONES_SUM=tree" "CRUCIBLE_CUDA_MSM_FOLD=levels" "CRUCIBLE_CUDA_MSM_SEG_BITS=3"; do
  for mix in bits=0.99 bits=0.9; do
    run 60 "[$knobs] bench msm-g1 2^20 $mix" env $knobs \
      crucible bench --backend cuda --op msm-g1 --sizes 2^20 --repeat 7 --scalars $mix
  done
  run 60 "[$knobs] bench msm-g2 2^20 bits=0.99" env $knobs \
    crucible bench --backend cuda --op msm-g2 --sizes 2^20 --repeat 7 --scalars bits=0.99
done
run 150 "prove 2^20 --check --proofs 4 --witness bits=0.9" \
  crucible prove --backend cuda --constraints 2^20 --check --proofs 4 --witness bits=0.9
nc="ncu --clock-control none --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed"
for mix in full bits=0.99; do
  run 180 "ncu per-kernel times: msm-g1 2^20 $mix" $nc \
    crucible bench --backend cuda --op msm-g1 --sizes 2^20 --repeat 1 --scalars $mix
done
run 180 "ncu per-kernel times: msm-g2 2^20" $nc crucible bench --backend cuda --op msm-g2 --sizes 2^20 --repeat 1
cat "$log"
