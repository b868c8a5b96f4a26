#!/usr/bin/env bash
# Builds the ICICLE peer for one curve: ICICLE's front end and its CUDA backend from
# the vendored open-icicle sources (upstream CMake, that curve only, no CPU backend),
# installed under $BUILD_DIR/install, then harness.cpp against ICICLE's headers and
# libraries.
#
#   bash build.sh                      # -> $BUILD_DIR/harness, $BUILD_DIR/install/lib/...
#
# Environment (all optional):
#   CURVE       bls12-381 (default) or bn254 (ICICLE's -DCURVE=bn254)
#   BUILD_DIR   output folder            (default /tmp/icicle-peer/build, or
#                                         /tmp/icicle-peer/build-bn254 for bn254)
#   NVCC        nvcc to use              (default: nvcc on PATH, else /usr/local/cuda*/bin/nvcc)
#   CUDA_ARCH   GPU architecture         (default sm_90, H100 and H200; "90" works too)
#   JOBS        parallel build jobs      (default: every core)
#   CMAKE       cmake to use             (default: cmake on PATH, else the `cmake` Python package's)
#   ECNTT=1     also build ICICLE's EC-NTT (the harness does not use it; off saves build time)
#   HARNESS_ONLY=1  rebuild only the harness against an existing install
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ICICLE_COMMIT=a1f8a74b4c604367b9e1eae41aca4d02687e96fc
SRC="$HERE/third_party/open-icicle-a1f8a74/icicle"
CURVE="${CURVE:-bls12-381}"
case "$CURVE" in
    bls12-381) ICICLE_CURVE=bls12_381; HARNESS_DEF=-DCURVE_BLS12_381; DEFAULT_BUILD=/tmp/icicle-peer/build ;;
    bn254)     ICICLE_CURVE=bn254;     HARNESS_DEF=-DCURVE_BN254;     DEFAULT_BUILD=/tmp/icicle-peer/build-bn254 ;;
    *) echo "build.sh: CURVE must be bls12-381 or bn254, not $CURVE" >&2; exit 2 ;;
esac
BUILD="${BUILD_DIR:-$DEFAULT_BUILD}"
mkdir -p "$BUILD"
BUILD="$(cd "$BUILD" && pwd)"   # absolute: CMake's install prefix must be
ARCH="${CUDA_ARCH:-sm_90}"
ARCH_NUM="${ARCH#sm_}"
ARCH_NUM="${ARCH_NUM#compute_}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 4)}"
PREFIX="$BUILD/install"

[ -f "$SRC/CMakeLists.txt" ] || { echo "build.sh: no ICICLE sources at $SRC" >&2; exit 2; }

if [ -n "${NVCC:-}" ]; then
    :
elif command -v nvcc >/dev/null 2>&1; then
    NVCC="$(command -v nvcc)"
else
    NVCC="$(ls -d /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc 2>/dev/null | head -n1 || true)"
    [ -n "$NVCC" ] || { echo "build.sh: nvcc not found (set NVCC=...)" >&2; exit 2; }
fi
# ICICLE's CUDA CMake finds nvcc with `which nvcc`: put the chosen one first on PATH.
export PATH="$(dirname "$NVCC"):$PATH"

find_tool() {   # NAME: on PATH, else from the Python package of that name (pip's cmake / ninja)
    if command -v "$1" >/dev/null 2>&1; then
        command -v "$1"
        return
    fi
    local py
    for py in python3 python; do
        command -v "$py" >/dev/null 2>&1 || continue
        "$py" - "$1" 2>/dev/null <<'EOF' && return
import importlib, os, sys
name = sys.argv[1]
m = importlib.import_module(name)
d = getattr(m, "CMAKE_BIN_DIR", None) or getattr(m, "BIN_DIR", None)
p = os.path.join(d, name)
assert os.access(p, os.X_OK)
print(p)
EOF
    done
    return 1
}

mkdir -p "$BUILD"
echo "build.sh: open-icicle ${ICICLE_COMMIT:0:7} (ICICLE v4.0.0), curve $CURVE, $("$NVCC" --version | tail -n1), arch sm_$ARCH_NUM, $JOBS jobs"

if [ "${HARNESS_ONLY:-0}" != 1 ]; then
    CMAKE="${CMAKE:-$(find_tool cmake || true)}"
    [ -n "$CMAKE" ] || { echo "build.sh: cmake not found (set CMAKE=...)" >&2; exit 2; }
    GEN=()
    if NINJA="$(find_tool ninja)"; then
        GEN=(-G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA")
    fi
    echo "build.sh: $("$CMAKE" --version | head -n1)${NINJA:+, ninja}"
    ECNTT_OPT=OFF
    [ "${ECNTT:-0}" = 1 ] && ECNTT_OPT=ON
    # Upstream's own switches only: the curve (its scalar field comes with it), the CUDA
    # backend from the local tree, no CPU backend (it fetches Taskflow from the network),
    # the architecture, and no EC-NTT unless asked.
    t0=$(date +%s)
    "$CMAKE" -S "$SRC" -B "$BUILD/icicle" ${GEN[@]+"${GEN[@]}"} \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCURVE="$ICICLE_CURVE" \
        -DCPU_BACKEND=OFF \
        -DCUDA_BACKEND=local \
        -DCUDA_ARCH="$ARCH_NUM" \
        -DECNTT="$ECNTT_OPT" \
        -DBUILD_TESTS=OFF \
        > "$BUILD/cmake-configure.log" 2>&1 \
        || { cat "$BUILD/cmake-configure.log" >&2; echo "build.sh: cmake configure failed" >&2; exit 2; }
    grep -E 'building CURVE|CUDA backend|Build type|compiler identification|multi-threaded' \
        "$BUILD/cmake-configure.log" | sed 's/^/  /' || true
    "$CMAKE" --build "$BUILD/icicle" --parallel "$JOBS"
    "$CMAKE" --install "$BUILD/icicle" > "$BUILD/cmake-install.log"
    echo "build.sh: ICICLE built and installed in $(( $(date +%s) - t0 )) s:"
    (cd "$PREFIX" && find lib -name '*.so' | sort | sed 's/^/  /')
fi

# The harness: host C++ against ICICLE's front-end libraries; nvcc as the driver so the
# CUDA runtime (static, as nvcc links it by default) and its headers come with it.
"$NVCC" -std=c++17 -O2 -x c++ \
    -DICICLE_COMMIT="\"$ICICLE_COMMIT\"" "$HARNESS_DEF" \
    -I"$SRC/include" \
    -Xcompiler -pthread -Xcompiler -Wno-attributes \
    "$HERE/harness.cpp" \
    -L"$PREFIX/lib" -licicle_curve_"$ICICLE_CURVE" -licicle_field_"$ICICLE_CURVE" -licicle_device \
    -Xlinker -rpath -Xlinker '$ORIGIN/install/lib' -ldl -lpthread \
    -o "$BUILD/harness"

echo "build.sh: built $BUILD/harness (backend libraries: $PREFIX/lib/backend)"
