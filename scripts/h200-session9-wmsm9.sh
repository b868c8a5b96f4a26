#!/usr/bin/env bash
# Ninth session, the wgpu MSM (issue 18, helper wmsm9): correctness of the new paths
# first, then MSM G1 through the straight-line form, old path against new in one
# call, each without and then with the per-pass GPU profile (CRUCIBLE_WGPU_PROFILE=1:
# a table per MSM on stderr). Knobs: CRUCIBLE_WGPU_MSM_DIGITS=unsigned is the eighth
# session's sort (unsigned digits, c = log2 n − 3, one thread scanning each window),
# CRUCIBLE_WGPU_MSM_BUCKETS=projective the complete projective bucket sums.
# Run from the project root: bash .device/on-device.sh bash scripts/h200-session9-wmsm9.sh
set -uo pipefail
log=$OUT/wmsm9.log
run() { local limit=$1 label=$2; shift 2; echo "=== $label" >>"$log"; local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1; echo "--- exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"; }
S=CRUCIBLE_WGPU_FORMULAS=straight
old="CRUCIBLE_WGPU_MSM_DIGITS=unsigned CRUCIBLE_WGPU_MSM_BUCKETS=projective"
signed="CRUCIBLE_WGPU_MSM_BUCKETS=projective"
run 300 "wgpu straight (signed, xyzz): conformance --filter msm-g1 --max-log-size 16" \
  env $S crucible conformance --backend wgpu --max-log-size 16 --filter msm-g1
run 300 "wgpu straight ($signed): conformance --filter msm-g1 --max-log-size 16" \
  env $S $signed crucible conformance --backend wgpu --max-log-size 16 --filter msm-g1
run 300 "wgpu interpreted (signed): conformance --filter msm --max-log-size 14" \
  crucible conformance --backend wgpu --max-log-size 14 --filter msm
for v in "$old" "$signed" ""; do
  run 240 "wgpu straight ${v:-signed xyzz}: bench msm-g1 2^16,2^20" \
    env $S $v crucible bench --backend wgpu --op msm-g1 --sizes 2^16,2^20 --repeat 5
  run 240 "wgpu straight ${v:-signed xyzz}, profiled: bench msm-g1 2^16,2^20" \
    env $S CRUCIBLE_WGPU_PROFILE=1 $v crucible bench --backend wgpu --op msm-g1 --sizes 2^16,2^20 --repeat 2
done
for v in "CRUCIBLE_WGPU_MSM_DIGITS=unsigned" ""; do
  run 240 "wgpu interpreted ${v:-signed}: bench msm-g1 2^16,2^20" \
    env $v crucible bench --backend wgpu --op msm-g1 --sizes 2^16,2^20 --repeat 3
done
cat "$log"
