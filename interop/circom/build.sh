#!/usr/bin/env bash
# Builds every circom circuit here into snarkjs artifacts for crucible's interop tests,
# with the real tools (circom2 = the circom compiler as WebAssembly, snarkjs, circomlib;
# pinned in package.json, installed by `npm ci` in this folder):
#   powers of tau (bls12381, 2^14) -> per circuit: compile (--prime bls12381), Groth16
#   setup + one phase-2 contribution, verifying key, witness, and a snarkjs proof.
# Usage: interop/circom/build.sh OUT_DIR [PTAU_DIR] (from any working directory)
# Outputs in OUT_DIR, for each circuit C: C.r1cs, C.zkey, C.vk.json, C.wtns,
# C.snarkjs-proof.json, C.snarkjs-public.json; the same for BN254 (the default prime)
# in OUT_DIR/bn254, with circomlib's Poseidon and SHA-256 besides; and `done` last. Nothing is reused
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

# One circuit: compile with `prime`, Groth16 setup on `ptau` + one phase-2
# contribution, verifying key, witness, and a snarkjs proof, all in `dir`.
build_circuit() {
  local prime="$1" source="$2" dir="$3" ptau="$4" tag="$5"
  local c input
  c="$(basename "$source" .circom)"
  input="$here/${source%.circom}.input.json"
  mkdir -p "$dir"
  step "$tag$c-compile" circom2 "$source" --r1cs --wasm --prime "$prime" -o "$dir" -l node_modules
  step "$tag$c-setup" snarkjs groth16 setup "$dir/$c.r1cs" "$ptau" "$dir/${c}_0.zkey"
  step "$tag$c-contribute" snarkjs zkey contribute "$dir/${c}_0.zkey" "$dir/$c.zkey" \
    --name=crucible-ci -e="crucible interop $tag$c"
  rm -f "$dir/${c}_0.zkey"
  step "$tag$c-vk" snarkjs zkey export verificationkey "$dir/$c.zkey" "$dir/$c.vk.json"
  step "$tag$c-witness" snarkjs wtns calculate "$dir/${c}_js/$c.wasm" "$input" "$dir/$c.wtns"
  step "$tag$c-prove" snarkjs groth16 prove "$dir/$c.zkey" "$dir/$c.wtns" \
    "$dir/$c.snarkjs-proof.json" "$dir/$c.snarkjs-public.json"
}

for source in *.circom; do
  build_circuit bls12381 "$source" "$out" "$ptau" ""
done

# BN254 (circom's default prime, snarkjs' bn128): the same circuits plus circomlib's
# Poseidon and SHA-256 (bn254/), in OUT_DIR/bn254, on a power-15 powers of tau
# (SHA-256 of one block needs a domain of 2^15). PTAU_DIR/bn128-pot15.ptau is used
# when present (CI writes it with `dev_ptau ... 15 1 --bn254`), else snarkjs makes one.
bn_ptau="$ptau_dir/bn128-pot15.ptau"
if [ ! -f "$bn_ptau" ]; then
  step bn128-ptau-new snarkjs powersoftau new bn128 15 "$ptau_dir/bn128_0.ptau"
  step bn128-ptau-contribute snarkjs powersoftau contribute "$ptau_dir/bn128_0.ptau" \
    "$ptau_dir/bn128_1.ptau" --name=crucible-ci -e="crucible interop, not a ceremony"
  step bn128-ptau-prepare snarkjs powersoftau prepare phase2 "$ptau_dir/bn128_1.ptau" "$bn_ptau.tmp"
  mv "$bn_ptau.tmp" "$bn_ptau"
  rm -f "$ptau_dir/bn128_0.ptau" "$ptau_dir/bn128_1.ptau"
fi
for source in *.circom bn254/*.circom; do
  build_circuit bn128 "$source" "$out/bn254" "$bn_ptau" "bn254-"
done
touch "$out/done"
