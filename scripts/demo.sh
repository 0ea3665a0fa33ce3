#!/usr/bin/env bash
# The no-GPU demo: start gpuspyd on a scratch data dir, replay a synthetic 2-rank training job
# through the real gRPC ingest, print the per-step report, stop the daemon.
# SCENARIO picks the pathology (default sync_stall), RANKS the ranks (default 2), SLOW_RANK the
# straggler the others wait for in the gradient all-reduce (default 1; -1: none; the straggler_*
# scenarios pick their own when it is -1).
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
"$bin/tools/replay/gpuspy-replay" --collector "$addr" --job demo --ranks "${RANKS:-2}" --steps 8 \
  --scenario "${SCENARIO:-sync_stall}" --slow-rank "${SLOW_RANK:-1}"
echo
"$bin/viewer/cli/gpuspy" --collector "$addr" jobs
echo
"$bin/viewer/cli/gpuspy" --collector "$addr" report --job demo --last 4
