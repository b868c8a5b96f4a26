#!/usr/bin/env bash
# Ninth session, wgsl9's H200 call (issue 18): each curve's formula form on the NVIDIA
# Vulkan driver (compile time per pipeline, cold, then from the pipeline cache; MSM
# speed per form), and wgpu conformance with G1 straight (hardware default) and G2
# registers (its candidate: PerCurve::for_adapter switches G2 to it if every pipeline
# compiles in under 5 s here).
#   bash .device/on-device.sh bash scripts/h200-session9-wgsl9.sh compile   (< 9 min)
#   bash .device/on-device.sh bash scripts/h200-session9-wgsl9.sh measure   (< 10 min)
# with `crucible` staged in .device/bin (../shared/gpu/stage.sh).
set -uo pipefail
part=${1:-compile}
log=$OUT/wgsl9-$part.log
run() { # run LIMIT_S LABEL COMMAND...
  local limit=$1 label=$2; shift 2
  echo "=== $label" >>"$log"
  local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "--- exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"
}
# The driver's own shader disk cache off, so that "cold" is cold and a hit is ours.
export __GL_SHADER_DISK_CACHE=0
export RUST_LOG=warn,crucible_backend_wgpu=info
cache=/tmp/wgpu-pipelines
rm -rf "$cache"
if [ "$part" = compile ]; then
# 1. Cold compiles of G2's candidate forms (each pipeline's creation time is logged),
#    one MSM of 2^16 each, capped at 150 s (straight, not run: it did not finish in
#    150 s in session 8).
for g2 in registers compact; do
  CRUCIBLE_WGPU_CACHE= CRUCIBLE_WGPU_FORMULAS=g1=straight,g2=$g2 run 150 \
    "cold g2=$g2: bench msm-g2 2^16" \
    crucible bench --backend wgpu --op msm-g2 --sizes 2^16 --repeat 1
done
# The defaults (G1 straight, G2 interpreted) in the same call, for the ratios.
CRUCIBLE_WGPU_CACHE= run 100 "defaults: bench msm-g1,msm-g2 2^16,2^20" \
  crucible bench --backend wgpu --op msm-g1,msm-g2 --sizes 2^16,2^20 --repeat 5
CRUCIBLE_WGPU_CACHE= run 100 "defaults: conformance --max-log-size 16" \
  crucible conformance --backend wgpu --max-log-size 16
else
# 2. Conformance with G1 straight, G2 registers, pipelines cached in $cache (cold),
#    then the MSM cases again from the cache (the second run's pipeline times are the
#    hit).
export CRUCIBLE_WGPU_FORMULAS=g1=straight,g2=registers
CRUCIBLE_WGPU_CACHE=$cache run 200 "g2=registers: conformance --max-log-size 16 (cache cold)" \
  crucible conformance --backend wgpu --max-log-size 16
CRUCIBLE_WGPU_CACHE=$cache run 90 "g2=registers: conformance msm --max-log-size 12 (cache warm)" \
  crucible conformance --backend wgpu --max-log-size 12 --filter msm
unset CRUCIBLE_WGPU_FORMULAS
ls -l "$cache" >>"$log" 2>&1
# 3. MSM speed per form, in one bench call each (the cache warm where it can be).
for forms in "g1=straight,g2=registers" "g1=straight,g2=compact"; do
  CRUCIBLE_WGPU_CACHE=$cache CRUCIBLE_WGPU_FORMULAS=$forms run 100 \
    "FORMULAS=$forms: bench msm-g1,msm-g2 2^16,2^20" \
    crucible bench --backend wgpu --op msm-g1,msm-g2 --sizes 2^16,2^20 --repeat 5
done
fi
grep -vE "^ok " "$log"
