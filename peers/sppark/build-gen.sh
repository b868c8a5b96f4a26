#!/usr/bin/env bash
# Builds the input generator (gen/, Rust, arkworks) into bin/, on a machine with Rust:
# the GPU machine needs no Rust, only this binary (bin/ is git-ignored: copy it along
# with the checkout). Run it from anywhere:
#
#   bash peers/sppark/build-gen.sh          # -> peers/sppark/bin/sppark-gen (any x86-64)
#   FAST=1 bash peers/sppark/build-gen.sh   # also bin/sppark-gen-v3 (x86-64-v3 + ADX:
#                                           # arkworks' assembly multiplication; run.sh
#                                           # uses it where the CPU has those features)
#
# Both are static executables (glibc linked in), so they run on a machine with another
# glibc; both write byte-identical files for the same arguments. Cargo's target folder
# is CARGO_TARGET_DIR (default gen/target, git-ignored).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TRIPLE=x86_64-unknown-linux-gnu
TARGET_DIR="${CARGO_TARGET_DIR:-$HERE/gen/target}"
mkdir -p "$HERE/bin"

build() {   # NAME RUSTFLAGS
    local name=$1 flags=$2 dir="$TARGET_DIR/gen-$1"
    echo "build-gen.sh: $name (RUSTFLAGS=$flags)"
    RUSTFLAGS="$flags" cargo build --release --locked \
        --manifest-path "$HERE/gen/Cargo.toml" --target "$TRIPLE" --target-dir "$dir"
    cp "$dir/$TRIPLE/release/sppark-gen" "$HERE/bin/$name"
    strip "$HERE/bin/$name" 2>/dev/null || true
    echo "build-gen.sh: built $HERE/bin/$name"
}

build sppark-gen "-C target-feature=+crt-static"
if [ "${FAST:-0}" = 1 ]; then
    build sppark-gen-v3 "-C target-feature=+crt-static,+adx,+bmi2 -C target-cpu=x86-64-v3"
fi
