#!/usr/bin/env bash
# The H200 call the seventh session prepared and could not run (no machine was lent):
# stage with ../shared/gpu/stage.sh, copy the CUDA `device` test executable to
# .device/bin/test-device, this script to .device/, service/bench/serve-vs-prove.sh to
# .device/, the circom chain artifacts (interop/circom/stage-device.sh) to
# .device/circom, then run `bash .device/on-device.sh bash .device/h200-next-call.sh`
# with carry [".device"]. About 8 minutes (split it in two calls if a call's 600 s
# limit is near).
#
# Issue 14: the driver OOM inside a lease (device synchronized before the pool is
# trimmed). Issue 17: bit-heavy MSMs against full-width ones, and a bit-heavy proof
# (byte-identical, and its throughput). Issue 19: a circom .zkey/.wtns through the
# daemon on cuda, and the daemon against prove on the engine with assignment-only
# synthesis and automatic synthesis threads. Issue 18: the straight-line formulas.
set -uo pipefail
log=$OUT/next-call.log
export CRUCIBLE_CUDA_CACHE=/tmp/cubin CRUCIBLE_CACHE_DIR=/tmp/keys
echo "=== test-device driver_out_of_memory_inside_a_lease_is_named_and_survived" >>"$log"
timeout 120 .device/bin/test-device driver_out_of_memory_inside_a_lease_is_named_and_survived \
  --exact --nocapture --test-threads=1 >>"$log" 2>&1
echo "exit $?" >>"$log"
for op in msm-g1 msm-g2; do
  for mix in full bits=0.9 bits=0.99; do
    echo "=== bench --backend cuda --op $op --sizes 2^20 --repeat 7 --scalars $mix" >>"$log"
    timeout 90 crucible bench --backend cuda --op $op --sizes 2^20 --repeat 7 --scalars $mix >>"$log" 2>&1
  done
done
echo "=== prove --backend cuda --constraints 2^20 --check --proofs 4 --witness bits=0.9" >>"$log"
timeout 200 crucible prove --backend cuda --constraints 2^20 --check --proofs 4 --witness bits=0.9 2>&1 \
  | grep -v '^proof [0-9]' >>"$log"
echo "=== prove --backend cuda --constraints 2^20 --proofs 64 --workers-per-device 2 --witness bits=0.9" >>"$log"
timeout 120 crucible prove --backend cuda --constraints 2^20 --proofs 64 --workers-per-device 2 --witness bits=0.9 2>&1 \
  | grep -v '^proof [0-9]' >>"$log"
echo "=== serve + client on the circom chain (.zkey, .wtns) on cuda" >>"$log"
c=.device/circom
crucible serve --backend cuda --listen 127.0.0.1:50052 >"$OUT/serve-circom.log" 2>&1 &
srv=$!
for _ in $(seq 600); do grep -q '^grpc listening on' "$OUT/serve-circom.log" && break; sleep 0.1; done
crucible client --addr http://127.0.0.1:50052 load-key --id chain --key "zkey:$PWD/$c/chain.zkey" >>"$log" 2>&1
for _ in 1 2 3; do
  crucible client --addr http://127.0.0.1:50052 prove --id chain --wtns "$c/chain.wtns" 2>&1 | head -12 >>"$log"
done
kill -TERM $srv; wait $srv; echo "serve exit $?" >>"$log"
# Issue 18: the straight-line WGSL formulas on the H200's Vulkan driver (opt-in until
# this shows them correct and faster): conformance, then MSM and proof times.
for f in interpreted straight; do
  echo "=== CRUCIBLE_WGPU_FORMULAS=$f conformance --backend wgpu --filter msm --max-log-size 12" >>"$log"
  CRUCIBLE_WGPU_FORMULAS=$f timeout 240 crucible conformance --backend wgpu --filter msm --max-log-size 12 2>&1 | tail -3 >>"$log"
  echo "=== CRUCIBLE_WGPU_FORMULAS=$f bench --backend wgpu --op msm-g1 --sizes 2^16,2^20 --repeat 5" >>"$log"
  CRUCIBLE_WGPU_FORMULAS=$f timeout 240 crucible bench --backend wgpu --op msm-g1 --sizes 2^16,2^20 --repeat 5 >>"$log" 2>&1
done
echo "=== serve-vs-prove.sh --synthesis-threads auto" >>"$log"
timeout 200 bash .device/serve-vs-prove.sh --synthesis-threads auto >>"$log" 2>&1
echo "exit $?" >>"$log"
cat "$log"
