#!/usr/bin/env bash
# The whole ICICLE peer benchmark in one command, on the GPU machine:
# build ICICLE (front end + CUDA backend, for the curve) and the harness in the
# background, generate inputs + expected outputs with the sppark peer's generator
# (../sppark/bin/sppark-gen, arkworks, built beforehand by ../sppark/build-gen.sh),
# run, print the table.
#
#   bash peers/icicle/run.sh [--curve bls12-381|bn254] [--repeat R] [--no-pinned]
#                            [--no-precompute] [SPEC...]
#     SPEC: g1:LOG | g2:LOG | ntt:LOG | LOG (all three); default:
#           g1:20 g1:24 g2:20 ntt:20 ntt:24
#
# Environment (optional):
#   ICICLE_PEER_WORK  scratch folder for build, data, logs (default /tmp/icicle-peer);
#                     BLS12-381 uses build/ and data/ there, BN254 build-bn254/, data-bn254/
#   ICICLE_PEER_DATA  data folder; point it at the sppark peer's data folder of the same
#                     curve with REUSE_DATA=1 to share one set of inputs
#   ARK_MSM_MAX       largest log size whose expected MSM is also computed with
#                     arkworks' VariableBaseMSM (default 20; every size always gets
#                     the exact closed form, see ../sppark/gen/src/main.rs)
#   REUSE_DATA=1      keep an existing data folder instead of regenerating it
#   ICICLE_PEER_BUILD build folder (default $ICICLE_PEER_WORK/build or build-bn254):
#                     build.sh's output, the harness and install/ (ICICLE's libraries)
#   REUSE_BUILD=1     skip the build when the harness and ICICLE's install are there (a
#                     build of an earlier run, or one made on another machine with the
#                     same CUDA: ICICLE's source build takes 8 to 12 minutes on 16 cores)
#   HOSTCHECK=1       also run the harness's CPU representation check at 2^10
# Exit status: the harness's (1 on any MISMATCH, 2 on an ICICLE/CUDA error), or 2 on a
# setup failure. Logs and the table are also copied to $OUT when that is set.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="${ICICLE_PEER_WORK:-/tmp/icicle-peer}"
ARK_MSM_MAX="${ARK_MSM_MAX:-20}"
GEN_DIR="$HERE/../sppark/bin"

CURVE=bls12-381
REPEAT=7
HFLAGS=()
SPECS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --curve) CURVE="$2"; shift 2 ;;
        --repeat) REPEAT="$2"; shift 2 ;;
        --no-pinned) HFLAGS+=(--no-pinned); shift ;;
        --no-precompute) HFLAGS+=(--no-precompute); shift ;;
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
DATA="${ICICLE_PEER_DATA:-$WORK/data$SFX}"
BUILD="${ICICLE_PEER_BUILD:-$WORK/build$SFX}"

mkdir -p "$WORK"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }

copy_out() {
    if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
        for f in build gen harness; do
            [ -f "$WORK/$f.log" ] && cp "$WORK/$f.log" "$OUT/icicle$SFX-$f.log"
        done
        [ -f "$WORK/table.txt" ] && cp "$WORK/table.txt" "$OUT/icicle$SFX-table.txt"
    fi
    return 0
}

stamp "ICICLE peer benchmark: curve $CURVE, specs ${SPECS[*]}, repeat $REPEAT, work dir $WORK"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm,power.limit \
      --format=csv 2>/dev/null || echo "(nvidia-smi unavailable)"; } | sed 's/^/  /'
echo "  host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

# 1. Build in the background (every core; generation is mostly I/O and arkworks on all cores too).
rm -f "$WORK/build.log" "$WORK/gen.log" "$WORK/harness.log" "$WORK/rows.tsv" "$WORK/table.txt"
if [ "${REUSE_BUILD:-0}" = 1 ] && [ -x "$BUILD/harness" ] && [ -d "$BUILD/install/lib/backend" ]; then
    stamp "reusing the build in $BUILD"
    BUILD_PID=
else
    stamp "building ICICLE ($CURVE) and the harness in the background (8 to 12 minutes on 16 cores)"
    ( CURVE="$CURVE" BUILD_DIR="$BUILD" bash "$HERE/build.sh" > "$WORK/build.log" 2>&1 ) &
    BUILD_PID=$!
fi

# 2. Generate inputs and expected outputs (the sppark peer's generator, same flags):
# bin/sppark-gen-v3 (x86-64-v3 + ADX) where it exists and the CPU has those features,
# else bin/sppark-gen (any x86-64).
GEN_SRC="$GEN_DIR/sppark-gen"
if [ -f "$GEN_DIR/sppark-gen-v3" ]; then
    GEN_SRC="$GEN_DIR/sppark-gen-v3"
    for f in avx2 bmi1 bmi2 fma f16c movbe abm adx; do
        grep -qw "$f" /proc/cpuinfo 2>/dev/null || { GEN_SRC="$GEN_DIR/sppark-gen"; break; }
    done
fi
[ -f "$GEN_SRC" ] || { echo "no generator at $GEN_SRC: build it with peers/sppark/build-gen.sh (needs Rust)" \
                            "and bring peers/sppark/bin/ along with the checkout" >&2; exit 2; }
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
    set +e
    "$GEN" "$DATA" --curve "$CURVE" --sets 2 --ark-msm-max "$ARK_MSM_MAX" "${GEN_SPECS[@]}" > "$WORK/gen.log" 2>&1
    GEN_RC=$?
    set -e
    cat "$WORK/gen.log"
    [ "$GEN_RC" = 0 ] || { echo "sppark-gen failed" >&2; copy_out; exit 2; }
fi

# 3. Wait for the build.
if [ -n "$BUILD_PID" ]; then
    stamp "waiting for the build"
    if ! wait "$BUILD_PID"; then
        tail -n 60 "$WORK/build.log" >&2
        echo "build failed (whole log: $WORK/build.log)" >&2
        copy_out
        exit 2
    fi
    grep -E '^build.sh|^  ' "$WORK/build.log" || true
    stamp "build done"
fi

if [ "${HOSTCHECK:-0}" = 1 ]; then
    stamp "hostcheck (ICICLE's host arithmetic, no GPU) at 2^10"
    "$BUILD/harness" "$DATA" --hostcheck 10 || { echo "hostcheck failed" >&2; copy_out; exit 2; }
fi

# 4. Run.
stamp "running the harness"
set +e
"$BUILD/harness" "$DATA" --backend "$BUILD/install/lib/backend" --repeat "$REPEAT" --rows "$WORK/rows.tsv" \
    ${HFLAGS[@]+"${HFLAGS[@]}"} "${SPECS[@]}" 2>&1 | tee "$WORK/harness.log"
RC=${PIPESTATUS[0]}
set -e
stamp "done, harness exit status $RC"

# 5. The table, from the rows the harness appended as it went (so a run cut short by an
# error still shows what finished).
{
    echo "ICICLE open-icicle a1f8a74 (v4.0.0), CUDA backend, curve $CURVE; ms over $REPEAT runs after one warm-up; harness exit status $RC"
    printf '%-7s %-5s %-64s %10s %10s %10s %10s  %s\n' op size mode median min max host check
    if [ -f "$WORK/rows.tsv" ]; then
        awk -F'\t' '{ printf "%-7s %-5s %-64s %10s %10s %10s %10s  %s\n", $1, $2, $3, $4, $5, $6, $7, $9 }' "$WORK/rows.tsv"
    fi
    echo "(median/min/max: CUDA events on ICICLE's stream around the call; host: median host clock around the call)"
} > "$WORK/table.txt"
echo
cat "$WORK/table.txt"

copy_out
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ] && [ -f "$DATA/manifest.txt" ] && [ "${COPY_MANIFEST:-0}" = 1 ]; then
    cp "$DATA/manifest.txt" "$OUT/icicle$SFX-gen-manifest.txt"
fi
exit "$RC"
