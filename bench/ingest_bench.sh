#!/usr/bin/env bash
# Collector ingest throughput: R concurrent producers (gpuspy-replay ranks) stream launch-storm
# steps through the real gRPC ingest into the embedded store; prints events/s stored and gpuspyd's
# CPU time (user + system) for them.
# usage: bench/ingest_bench.sh [BUILD_DIR] [RANKS] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}
ranks=${2:-4}
steps=${3:-40}
tmp=$(mktemp -d /tmp/gpuspy-ingest-bench.XXXXXX)
"$bin/collector/server/gpuspyd" --listen 127.0.0.1:0 --unix "" --http "" --data-dir "$tmp/store" \
  --port-file "$tmp/port" --log-level warn --compress "${COMPRESS:-zstd}" &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [[ -s "$tmp/port" ]] && break; sleep 0.05; done
addr="127.0.0.1:$(cat "$tmp/port")"
start=$(date +%s.%N)
"$bin/tools/replay/gpuspy-replay" --collector "$addr" --job bench --ranks "$ranks" --steps "$steps" \
  --scenario launch_storm --batch-events 4096 > "$tmp/replay.log"
end=$(date +%s.%N)
# gpuspyd's own CPU time (user + system, clock ticks): on a shared machine steadier than the wall.
cpu_ticks=$(awk '{print $14 + $15}' "/proc/$daemon/stat")
events=$(awk '{s += $3} END {print s}' "$tmp/replay.log")
bytes=$(du -sb "$tmp/store" | cut -f1)
segments=$(du -sb "$tmp/store/segments" | cut -f1)
python3 - "$events" "$start" "$end" "$bytes" "$ranks" "$segments" "$cpu_ticks" "$(getconf CLK_TCK)" <<'PY'
import sys
events, start, end, stored, ranks = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
segments = int(sys.argv[6])
cpu_s = int(sys.argv[7]) / int(sys.argv[8])
s = end - start
print(f"| ingest, {ranks} producers, durable (segment + SQLite index per batch) | {events:,} events | "
      f"{s:.2f} s | {events/s/1e6:.2f} M events/s | {cpu_s:.2f} s ({cpu_s/events*1e9:.0f} ns/event) | "
      f"{stored/events:.1f} B/event at rest "
      f"({segments/events:.1f} in segments, the rest SQLite index + WAL) |")
PY
