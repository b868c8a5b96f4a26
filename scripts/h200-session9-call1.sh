#!/usr/bin/env bash
# Ninth session, H200 call 1: the tree reduction merged from s8-reduce (conformance,
# then tree against levels), ncu per-kernel times of the NTT and the MSMs (where the
# time goes before the next kernel change), the proof.
#   bash .device/on-device.sh bash .device/h200-session9-call1.sh
# with `crucible`, `test-device` and `test-crucible_backend_cuda` in .device/bin.
set -uo pipefail
log=$OUT/call1.log
run() { # run LIMIT_S LABEL COMMAND...
  local limit=$1 label=$2; shift 2
  echo "=== $label" >>"$log"
  local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "--- exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"
}
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_CUDA_CACHE=/tmp/cubin
RUST_LOG=warn,crucible_backend_cuda=info run 120 "cold compile (split)" \
  crucible conformance --backend cuda --max-log-size 3 --filter ntt/forward/2^3
run 200 "conformance --backend cuda --max-log-size 20" \
  crucible conformance --backend cuda --max-log-size 20
CRUCIBLE_REQUIRE=cuda run 150 "device tests" .device/bin/test-device --test-threads=1
run 60 "cuda lib tests" .device/bin/test-crucible_backend_cuda
for red in tree levels; do
  for op in msm-g1 msm-g2; do
    sizes=2^20,2^24; [ $op = msm-g2 ] && sizes=2^20
    CRUCIBLE_CUDA_MSM_REDUCE=$red run 90 "REDUCE=$red bench $op $sizes" \
      crucible bench --backend cuda --op $op --sizes $sizes --repeat 7
  done
  CRUCIBLE_CUDA_MSM_REDUCE=$red run 60 "REDUCE=$red bench msm-g1 2^20 bits=0.99" \
    crucible bench --backend cuda --op msm-g1 --sizes 2^20 --repeat 7 --scalars bits=0.99
done
run 120 "bench prove 2^20 synthetic key" \
  crucible bench --backend cuda --op prove --sizes 2^20 --repeat 5 --synthetic-key
run 150 "prove 2^20 --check --proofs 4" crucible prove --backend cuda --constraints 2^20 --check --proofs 4
nc="ncu --clock-control none"
run 120 "ncu per-kernel times: ntt 2^20" $nc --metrics gpu__time_duration.sum,dram__bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
  crucible bench --backend cuda --op ntt --sizes 2^20 --repeat 1
run 120 "ncu sections: ntt_tile 2^20" $nc -k regex:ntt_tile --launch-count 3 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
  crucible bench --backend cuda --op ntt --sizes 2^20 --repeat 1
for mix in full bits=0.99; do
  run 180 "ncu per-kernel times: msm-g1 2^20 $mix" $nc --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum \
    crucible bench --backend cuda --op msm-g1 --sizes 2^20 --repeat 1 --scalars $mix
done
run 180 "ncu per-kernel times: msm-g2 2^20" $nc --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
  crucible bench --backend cuda --op msm-g2 --sizes 2^20 --repeat 1
cat "$log"
