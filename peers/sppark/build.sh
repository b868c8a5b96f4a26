#!/usr/bin/env bash
# Builds the sppark peer harness for one curve: blst (host field arithmetic sppark's
# host side calls) with the C compiler, then harness.cu with nvcc against sppark's
# headers; or, with the argument `hostcheck`, hostcheck.cpp with g++ (no CUDA needed).
#
#   bash build.sh                      # -> $BUILD_DIR/harness      (nvcc)
#   bash build.sh hostcheck            # -> $BUILD_DIR/hostcheck    (g++ only, no GPU)
#
# Environment (all optional):
#   CURVE       bls12-381 (default) or bn254 (sppark's alt_bn128: -DFEATURE_BN254)
#   BUILD_DIR   output folder            (default /tmp/sppark-peer/build, or
#                                         /tmp/sppark-peer/build-bn254 for bn254)
#   NVCC        nvcc to use              (default: nvcc on PATH, else /usr/local/cuda*/bin/nvcc)
#   CUDA_ARCH   GPU architecture         (default sm_90, H100 and H200)
#   CC, CXX     C and C++ compilers      (default gcc / g++, else cc / c++)
#   EXTRA_NVCC_FLAGS  appended to the nvcc command line
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SPPARK_VER=0.1.16
SPPARK_DIR="$HERE/third_party/sppark-$SPPARK_VER"
BLST_DIR="$HERE/third_party/blst-0.3.17"
CURVE="${CURVE:-bls12-381}"
case "$CURVE" in
    bls12-381) FEATURE=FEATURE_BLS12_381; DEFAULT_BUILD=/tmp/sppark-peer/build ;;
    bn254)     FEATURE=FEATURE_BN254;     DEFAULT_BUILD=/tmp/sppark-peer/build-bn254 ;;
    *) echo "build.sh: CURVE must be bls12-381 or bn254, not $CURVE" >&2; exit 2 ;;
esac
BUILD="${BUILD_DIR:-$DEFAULT_BUILD}"
ARCH="${CUDA_ARCH:-sm_90}"
CC="${CC:-$(command -v gcc || command -v cc || echo cc)}"
CXX="${CXX:-$(command -v g++ || command -v c++ || echo c++)}"
WHAT="${1:-harness}"

mkdir -p "$BUILD"

# blst: the same choice its own build.rs makes. With __ADX__ the mulx code paths
# are compiled in directly; sppark's host code (blst_t.hpp -> vect.h) must see
# the same define, so it goes to nvcc / g++ too.
ADX=()
if grep -qw adx /proc/cpuinfo 2>/dev/null; then
    ADX=(-D__ADX__)
fi

"$CC" -O2 -fno-builtin -mno-avx -fPIC -Wno-unused-function ${ADX[@]+"${ADX[@]}"} \
    -c "$BLST_DIR/src/server.c" -o "$BUILD/blst_server.o"
"$CC" -O2 -fPIC ${ADX[@]+"${ADX[@]}"} \
    -c "$BLST_DIR/build/assembly.S" -o "$BUILD/blst_assembly.o"

case "$WHAT" in
hostcheck)
    echo "build.sh: hostcheck, sppark $SPPARK_VER, curve $CURVE, $("$CXX" --version | head -n1), ${ADX[*]:-no ADX}"
    "$CXX" -O2 -std=c++17 -D"$FEATURE" ${ADX[@]+"${ADX[@]}"} \
        -I"$SPPARK_DIR" -I"$BLST_DIR/src" \
        -Wno-subobject-linkage -Wno-unused-function -pthread "$HERE/hostcheck.cpp" \
        "$BUILD/blst_server.o" "$BUILD/blst_assembly.o" -o "$BUILD/hostcheck"
    echo "build.sh: built $BUILD/hostcheck"
    ;;
harness)
    if [ -n "${NVCC:-}" ]; then
        :
    elif command -v nvcc >/dev/null 2>&1; then
        NVCC=nvcc
    else
        NVCC="$(ls -d /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc 2>/dev/null | head -n1 || true)"
        [ -n "$NVCC" ] || { echo "build.sh: nvcc not found (set NVCC=...)" >&2; exit 2; }
    fi
    echo "build.sh: sppark $SPPARK_VER, curve $CURVE, $("$NVCC" --version | tail -n1), arch $ARCH, ${ADX[*]:-no ADX}"
    # shellcheck disable=SC2086
    "$NVCC" -arch="$ARCH" -O3 -std=c++17 \
        -D"$FEATURE" -DTAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE ${ADX[@]+"${ADX[@]}"} \
        -DSPPARK_VERSION="\"$SPPARK_VER\"" \
        -I"$SPPARK_DIR" -I"$BLST_DIR/src" \
        -Xcompiler -pthread -Xcompiler -Wno-subobject-linkage -Xcompiler -Wno-unused-function \
        ${EXTRA_NVCC_FLAGS:-} \
        "$HERE/harness.cu" "$BUILD/blst_server.o" "$BUILD/blst_assembly.o" \
        -lpthread -o "$BUILD/harness"
    echo "build.sh: built $BUILD/harness"
    ;;
*) echo "build.sh: unknown target $WHAT (harness or hostcheck)" >&2; exit 2 ;;
esac
