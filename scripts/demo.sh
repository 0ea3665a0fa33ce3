#!/usr/bin/env bash
# The no-GPU demo: start gpuspyd on a scratch data dir, replay a synthetic 2-rank training job
# through the real gRPC ingest, print the per-step report, stop the daemon.
# SCENARIO picks the pathology (default sync_stall), RANKS the ranks (default 2; 4 for the
# multi-rank scenarios), SLOW_RANK a straggler the others wait for in the gradient all-reduce
# (default -1: none, so a single-process scenario shows its own pathology on every rank; the
# straggler_* scenarios pick their own: rank 2 of 4).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BUILD_DIR:-build}
data=$(mktemp -d /tmp/gpuspy-demo.XXXXXX)
port_file="$data/port"
"$bin/collector/server/gpuspyd" --listen 127.0.0.1:0 --unix "" --http "" --data-dir "$data/store" \
  --port-file "$port_file" --log-level warn &
daemon=$!
trap 'kill $daemon 2>/dev/null || true; wait $daemon 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 100); do [[ -s "$port_file" ]] && break; sleep 0.05; done
addr="127.0.0.1:$(cat "$port_file")"
scenario=${SCENARIO:-sync_stall}
case $scenario in
  straggler_compute|straggler_input|exposed_comm|comm_storm) default_ranks=4 ;;
  *) default_ranks=2 ;;
esac
"$bin/tools/replay/gpuspy-replay" --collector "$addr" --job demo --ranks "${RANKS:-$default_ranks}" --steps 8 \
  --scenario "$scenario" --slow-rank "${SLOW_RANK:--1}"
echo
"$bin/viewer/cli/gpuspy" --collector "$addr" jobs
echo
"$bin/viewer/cli/gpuspy" --collector "$addr" report --job demo --last 4
