#!/usr/bin/env bash
# The daemon against the one-shot command, in one call on one machine. First
# `crucible prove --proofs K` (it generates and caches the key if needed), then the
# same K proofs of the same key through `crucible serve`: the key staged once, the
# proofs sent over gRPC by `crucible client bench` from concurrent clients. Same
# backend, devices, workers per device and synthesis threads; each prints proofs per
# second; every proof is verified by the engine (and, for the daemon, by the client).
# Both run with each of the --synthesis-threads values given (comma-separated; `auto`
# leaves the flag out, so each sizes its host threads itself).
#
#   service/bench/serve-vs-prove.sh [--backend cuda] [--constraints 2^20] [--proofs 64]
#       [--workers-per-device 2] [--concurrency 16] [--synthesis-threads 1,auto] [--port 50051]
set -euo pipefail
backend=cuda constraints='2^20' proofs=64 workers=2 concurrency=16 synthesis=1,auto port=50051
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) backend=$2 ;;
    --constraints) constraints=$2 ;;
    --proofs) proofs=$2 ;;
    --workers-per-device) workers=$2 ;;
    --concurrency) concurrency=$2 ;;
    --synthesis-threads) synthesis=$2 ;;
    --port) port=$2 ;;
    *) echo "serve-vs-prove.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
case "$constraints" in
  2^*) n=$((1 << ${constraints#2^})) ;;
  *) n=$constraints ;;
esac

threads_flag() { # synthesis threads: a number, or auto (no flag)
  [ "$1" = auto ] || echo "--synthesis-threads $1"
}

prove_bench() { # synthesis threads
  echo "== crucible prove --backend $backend --constraints $n --proofs $proofs --workers-per-device $workers $(threads_flag "$1")"
  # shellcheck disable=SC2046
  crucible prove --backend "$backend" --constraints "$n" --proofs "$proofs" --workers-per-device "$workers" \
    $(threads_flag "$1") | grep -E 'proofs/second|verified|budget of|busy|synthesis threads'
}

serve_bench() { # synthesis threads
  echo "== crucible serve --backend $backend --workers-per-device $workers $(threads_flag "$1"); crucible client bench --proofs $proofs --concurrency $concurrency"
  local log status=0 server
  log=$(mktemp)
  # shellcheck disable=SC2046
  crucible serve --backend "$backend" --workers-per-device "$workers" $(threads_flag "$1") \
    --listen "127.0.0.1:$port" >"$log" 2>&1 &
  server=$!
  for _ in $(seq 600); do
    grep -q '^grpc listening on' "$log" && break
    kill -0 $server 2>/dev/null || { cat "$log"; return 1; }
    sleep 0.1
  done
  crucible client --addr "http://127.0.0.1:$port" bench --key "bench:n=$n,p=1,seed=0" \
    --proofs "$proofs" --concurrency "$concurrency" || status=$?
  kill -TERM $server
  wait $server || status=$?
  grep -E 'ERROR|WARN' "$log" || true
  return $status
}
status=0
for s in ${synthesis//,/ }; do
  prove_bench "$s" || status=$?
  serve_bench "$s" || status=$?
done
exit $status
