#!/usr/bin/env bash
# Copies the >= 10,000-constraint circuit's files (chain: made by build.sh) to
# .device/circom/, which travels to the GPU machine with .device/ (see
# /work/shared/gpu/stage.sh; run that first, it empties only .device/bin).
# Usage: interop/circom/stage-device.sh [OUT_DIR of build.sh, default interop/circom/out]
set -euo pipefail
root="$(git rev-parse --show-toplevel)"
out="${1:-$root/interop/circom/out}"
[ -f "$out/done" ] || { echo "no finished build in $out: run interop/circom/build.sh $out" >&2; exit 1; }
mkdir -p "$root/.device/circom"
cp "$out"/chain.zkey "$out"/chain.wtns "$out"/chain.r1cs "$out"/chain.vk.json "$root/.device/circom/"
du -sh "$root/.device/circom"
