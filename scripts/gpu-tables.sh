#!/usr/bin/env bash
# Reruns every table of BENCHMARKS.md on this machine (one CUDA GPU with a Vulkan
# driver: the tables were measured on an H200; the CPU table is the same machine's host),
# writing the result files under docs/results/, then regenerates BENCHMARKS.md from them.
#
#   scripts/gpu-tables.sh [--machine NAME] [--sppark] [--no-build]
#
# The commands are the ones docs/results/index.json names for each file (printed by
# `python3 scripts/benchmarks.py commands`), so each table's "Reproduce" block is what
# ran. --machine NAME: the files of another machine of index.json (default h200; h100
# holds the peer tables, the proofs-per-second rows and a conformance table). --sppark:
# run sppark's peer harness (peers/sppark/run.sh: it builds sppark with nvcc, generates
# inputs with arkworks and prints one table, every result checked; its generator must
# have been built first, peers/sppark/README.md); it runs first, on the same card, with
# the sizes of the tables, and its table becomes docs/results/h200-sppark-*.json. Without
# it the sppark files are left as they are. About 10 minutes on the H200 (the
# 2^20 and 2^24 proving keys are generated once into CRUCIBLE_CACHE_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

sppark="" build=1 machine=h200
while [ $# -gt 0 ]; do
  case "$1" in
    --machine) machine=$2; shift 2 ;;
    --sppark) sppark=1; shift ;;
    --no-build) build=0; shift ;;
    *) echo "gpu-tables.sh: unknown option $1 (see the header of this script)" >&2; exit 2 ;;
  esac
done

if [ "$build" = 1 ]; then
  cargo build --release -p crucible-cli
fi
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
export PATH="$target/release:$PATH"
command -v crucible >/dev/null || { echo "gpu-tables.sh: no crucible binary in $target/release" >&2; exit 1; }
export CRUCIBLE_REQUIRE=cuda,wgpu
logs="$(mktemp -d)"

if [ -n "$sppark" ] && [ "$machine" = h200 ]; then
  echo "== sppark peer (peers/sppark/run.sh)"
  bash peers/sppark/run.sh g1:20 g1:24 g2:20 ntt:20 ntt:24 | tee "$logs/sppark.log"
  python3 scripts/benchmarks.py sppark "$logs/sppark.log"
fi

python3 scripts/benchmarks.py commands "$machine" | while IFS= read -r line; do
  case "$line" in
    "crucible conformance "*) continue ;;           # run below, one log per command
  esac
  echo "== $line"
  bash -c "$line"
  case "$line" in
    *"--json > "*) python3 scripts/benchmarks.py stamp "${line##*> }" ;;
  esac
done

i=0
for args in "--backend all" "--backend cuda --max-log-size 20"; do
  i=$((i + 1))
  echo "== crucible conformance $args"
  # shellcheck disable=SC2086
  { echo "crucible conformance $args"; crucible conformance $args; } | tee "$logs/conformance$i.log"
done
python3 scripts/benchmarks.py conformance "$machine" "$logs/conformance1.log" "$logs/conformance2.log"

python3 scripts/benchmarks.py measured "$machine"
python3 scripts/benchmarks.py
echo "BENCHMARKS.md regenerated; the logs are in $logs"
