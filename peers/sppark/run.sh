#!/usr/bin/env bash
# The whole sppark peer benchmark in one command, on the GPU machine: build the harness
# (nvcc) in the background, generate inputs + expected outputs (bin/sppark-gen, arkworks,
# built beforehand by build-gen.sh), run, print the table.
#
#   bash peers/sppark/run.sh [--curve bls12-381|bn254] [--repeat R] [--no-pinned] [SPEC...]
#     SPEC: g1:LOG | g2:LOG | ntt:LOG | LOG (all three); default:
#           g1:20 g1:24 g2:20 ntt:20 ntt:24
#
# Environment (optional):
#   SPPARK_PEER_WORK  scratch folder for build, data, logs (default /tmp/sppark-peer);
#                     BLS12-381 uses build/ and data/ there, BN254 build-bn254/, data-bn254/
#   ARK_MSM_MAX       largest log size whose expected MSM is also computed with
#                     arkworks' VariableBaseMSM (default 20; every size always gets
#                     the exact closed form, see gen/src/main.rs)
#   REUSE_DATA=1      keep an existing data folder instead of regenerating it
#   HOSTCHECK=1       also run hostcheck (sppark's CPU code paths, g++) at 2^10
# Exit status: the harness's (1 on any MISMATCH), or 2 on a setup failure.
# Logs are also copied to $OUT when that is set (harness.log, or harness-bn254.log).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="${SPPARK_PEER_WORK:-/tmp/sppark-peer}"
ARK_MSM_MAX="${ARK_MSM_MAX:-20}"

CURVE=bls12-381
REPEAT=7
HFLAGS=()
SPECS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --curve) CURVE="$2"; shift 2 ;;
        --repeat) REPEAT="$2"; shift 2 ;;
        --no-pinned) HFLAGS+=(--no-pinned); shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
        *) SPECS+=("$1"); shift ;;
    esac
done
[ ${#SPECS[@]} -gt 0 ] || SPECS=(g1:20 g1:24 g2:20 ntt:20 ntt:24)
case "$CURVE" in
    bls12-381) SFX="" ;;
    bn254) SFX="-bn254" ;;
    *) echo "run.sh: --curve must be bls12-381 or bn254, not $CURVE" >&2; exit 2 ;;
esac
DATA="$WORK/data$SFX"
BUILD="$WORK/build$SFX"

mkdir -p "$WORK"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }

stamp "sppark peer benchmark: curve $CURVE, specs ${SPECS[*]}, repeat $REPEAT, work dir $WORK"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm,power.limit \
      --format=csv 2>/dev/null || echo "(nvidia-smi unavailable)"; } | sed 's/^/  /'
echo "  host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

# 1. Build in the background (nvcc is single-threaded; generation uses every core).
( CURVE="$CURVE" BUILD_DIR="$BUILD" bash "$HERE/build.sh" > "$WORK/build$SFX.log" 2>&1 ) &
BUILD_PID=$!

# 2. Generate inputs and expected outputs with the generator build-gen.sh made:
# bin/sppark-gen-v3 (x86-64-v3 + ADX) where it exists and the CPU has those features,
# else bin/sppark-gen (any x86-64).
GEN_SRC="$HERE/bin/sppark-gen"
if [ -f "$HERE/bin/sppark-gen-v3" ]; then
    GEN_SRC="$HERE/bin/sppark-gen-v3"
    for f in avx2 bmi1 bmi2 fma f16c movbe abm adx; do
        grep -qw "$f" /proc/cpuinfo 2>/dev/null || { GEN_SRC="$HERE/bin/sppark-gen"; break; }
    done
fi
if [ ! -f "$GEN_SRC" ]; then
    echo "run.sh: no generator at $GEN_SRC: build it with peers/sppark/build-gen.sh (needs Rust)" \
         "and bring peers/sppark/bin/ along with the checkout" >&2
    exit 2
fi
GEN="$WORK/sppark-gen"
cp "$GEN_SRC" "$GEN"
chmod +x "$GEN"
if [ "${REUSE_DATA:-0}" = 1 ] && [ -f "$DATA/manifest.txt" ] \
        && grep -q "curve=$CURVE " "$DATA/manifest.txt"; then
    stamp "reusing $DATA"
else
    rm -rf "$DATA"
    stamp "generating $CURVE inputs ($(basename "$GEN_SRC"), arkworks)"
    GEN_SPECS=("${SPECS[@]}")
    [ "${HOSTCHECK:-0}" = 1 ] && GEN_SPECS+=(10)
    "$GEN" "$DATA" --curve "$CURVE" --sets 2 --ark-msm-max "$ARK_MSM_MAX" "${GEN_SPECS[@]}" 2>&1 \
        | tee "$WORK/gen$SFX.log"
    [ "${PIPESTATUS[0]}" = 0 ] || { echo "sppark-gen failed" >&2; exit 2; }
fi

# 3. Wait for the build.
stamp "waiting for the build"
if ! wait "$BUILD_PID"; then
    cat "$WORK/build$SFX.log" >&2
    echo "build failed" >&2
    exit 2
fi
cat "$WORK/build$SFX.log"

if [ "${HOSTCHECK:-0}" = 1 ]; then
    stamp "hostcheck (sppark's CPU code paths) at 2^10"
    CURVE="$CURVE" BUILD_DIR="$BUILD" bash "$HERE/build.sh" hostcheck
    "$BUILD/hostcheck" "$DATA" 10 || { echo "hostcheck failed" >&2; exit 2; }
fi

# 4. Run.
stamp "running the harness"
set +e
"$BUILD/harness" "$DATA" --repeat "$REPEAT" ${HFLAGS[@]+"${HFLAGS[@]}"} "${SPECS[@]}" 2>&1 \
    | tee "$WORK/harness$SFX.log"
RC=${PIPESTATUS[0]}
set -e
stamp "done, harness exit status $RC"

if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
    for f in build gen harness; do
        [ -f "$WORK/$f$SFX.log" ] && cp "$WORK/$f$SFX.log" "$OUT/"
    done
    cp "$DATA/manifest.txt" "$OUT/gen-manifest$SFX.txt" 2>/dev/null || true
fi
exit "$RC"
