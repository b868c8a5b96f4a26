#!/usr/bin/env bash
# Builds every circom circuit here into snarkjs artifacts for crucible's interop tests,
# with the real tools (circom2 = the circom compiler as WebAssembly, snarkjs, circomlib;
# pinned in package.json, installed by `npm ci` in this folder):
#   powers of tau (bls12381, 2^14) -> per circuit: compile (--prime bls12381), Groth16
#   setup + one phase-2 contribution, verifying key, witness, and a snarkjs proof.
# Usage: interop/circom/build.sh OUT_DIR [PTAU_DIR] (from any working directory)
# Outputs in OUT_DIR, for each circuit C: C.r1cs, C.zkey, C.vk.json, C.wtns,
# C.snarkjs-proof.json, C.snarkjs-public.json, and `done` last. Nothing is reused
# from an earlier run unless PTAU_DIR already holds pot14.ptau: CI writes one there
# with crucible-files' development writer (`cargo run --release -p crucible-files
# --example dev_ptau -- PTAU_DIR/pot14.ptau 14`, seconds); without it, snarkjs makes
# one (about 25 CPU-minutes). Not a ceremony either way: the entropy is fixed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: build.sh OUT_DIR [PTAU_DIR]}"
ptau_dir="${2:-$out/ptau}"
mkdir -p "$out" "$ptau_dir"
out="$(cd "$out" && pwd)"
ptau_dir="$(cd "$ptau_dir" && pwd)"
rm -f "$out/done"
# circom2 is WebAssembly: it opens files through the working directory and its
# parents only, and an include path starting with `..` is not found; so it runs from
# here, with the sources and the include path relative to here.
cd "$here"
export PATH="$here/node_modules/.bin:$PATH"
for tool in circom2 snarkjs; do
  command -v "$tool" >/dev/null || {
    echo "build.sh: $tool not found: run \`npm ci\` in $here" >&2
    exit 1
  }
done

step() {
  local name="$1"; shift
  local t0=$SECONDS
  "$@" >"$out/log-$name.txt" 2>&1 || {
    echo "build.sh: $name failed:" >&2
    cat "$out/log-$name.txt" >&2
    exit 1
  }
  echo "build.sh: $name ($((SECONDS - t0)) s)"
}

# Power 14: the largest circuit (chain, 10,200 constraints + 2 public signals + 1)
# needs a domain of 2^14.
ptau="$ptau_dir/pot14.ptau"
if [ ! -f "$ptau" ]; then
  step ptau-new snarkjs powersoftau new bls12381 14 "$ptau_dir/pot14_0.ptau"
  step ptau-contribute snarkjs powersoftau contribute "$ptau_dir/pot14_0.ptau" \
    "$ptau_dir/pot14_1.ptau" --name=crucible-ci -e="crucible interop, not a ceremony"
  step ptau-prepare snarkjs powersoftau prepare phase2 "$ptau_dir/pot14_1.ptau" "$ptau.tmp"
  mv "$ptau.tmp" "$ptau"
  rm -f "$ptau_dir/pot14_0.ptau" "$ptau_dir/pot14_1.ptau"
fi

for source in *.circom; do
  c="$(basename "$source" .circom)"
  step "$c-compile" circom2 "$source" --r1cs --wasm --prime bls12381 -o "$out" -l node_modules
  step "$c-setup" snarkjs groth16 setup "$out/$c.r1cs" "$ptau" "$out/${c}_0.zkey"
  step "$c-contribute" snarkjs zkey contribute "$out/${c}_0.zkey" "$out/$c.zkey" \
    --name=crucible-ci -e="crucible interop $c"
  rm -f "$out/${c}_0.zkey"
  step "$c-vk" snarkjs zkey export verificationkey "$out/$c.zkey" "$out/$c.vk.json"
  step "$c-witness" snarkjs wtns calculate "$out/${c}_js/$c.wasm" "$here/$c.input.json" "$out/$c.wtns"
  step "$c-prove" snarkjs groth16 prove "$out/$c.zkey" "$out/$c.wtns" \
    "$out/$c.snarkjs-proof.json" "$out/$c.snarkjs-public.json"
done
touch "$out/done"
