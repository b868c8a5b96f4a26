#!/usr/bin/env bash
# Eleventh session, H200 call 5, after the review mend: conformance on every backend,
# G2 2^20 (cuda, wgpu) and the wgpu NTT profile.
#   bash .device/on-device.sh bash .device/h200-session11-call5.sh
set -uo pipefail
export CRUCIBLE_CACHE_DIR=/tmp/keys CRUCIBLE_WGPU_CACHE=/tmp/wp
log=$OUT/call5.log
. .device/h200-lib.sh
run 300 "conformance --backend all" crucible conformance --backend all
run 60 "cuda,wgpu: msm-g2 2^20" crucible bench --backend cuda,wgpu --op msm-g2 --sizes 2^20 --repeat 5
run 60 "wgpu profiled ntt 2^20" env CRUCIBLE_WGPU_PROFILE=1 crucible bench --backend wgpu --op ntt --sizes 2^20 --repeat 1
cat "$log"
