#!/usr/bin/env bash
# Reports and summaries while ingesting (issue 22: under 6 producers + 4 query loops for 30 s,
# gpuspyd's RSS reached 734 MB with --analysis-cache-mb 64, a summary took up to 10.1 s and an
# HTTP report 13.1 s). 6 gpuspy-replay producers stream live jobs (one batch per --batch-ms),
# while 4 HTTP loops ask, job after job, for the summary (2 loops) and the last step's report
# (2 loops). Prints gpuspyd's peak RSS (sampled every 0.25 s, and VmHWM), and per query kind
# the answers by status, p50/p99/max latency.
# usage: [REPLAY=gpuspy-replay] [QUERIES=0] bench/analysis_load.sh [BUILD_DIR] [CACHE_MB] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build}")
cache_mb=${2:-64}
seconds=${3:-30}
replay=${REPLAY:-$bin/tools/replay/gpuspy-replay}
tmp=$(mktemp -d /tmp/gpuspy-analysis-load.XXXXXX)
pids=()
"$bin/collector/server/gpuspyd" --listen 127.0.0.1:0 --unix "" --http 127.0.0.1:0 \
  --data-dir "$tmp/store" --port-file "$tmp/port" --http-port-file "$tmp/hport" \
  --analysis-cache-mb "$cache_mb" --log-level warn 2> "$tmp/log" &
daemon=$!
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT
for _ in $(seq 200); do [[ -s "$tmp/port" && -s "$tmp/hport" ]] && break; sleep 0.05; done
addr="127.0.0.1:$(cat "$tmp/port")"
http="http://127.0.0.1:$(cat "$tmp/hport")"

for i in 0 1 2 3 4 5; do
  "$replay" --collector "$addr" --job "live$i" --steps 3000 --scenario sync_stall \
    --batch-events 2000 --batch-ms 20 --seed "$i" > /dev/null 2>&1 &
  pids+=($!)
done
sleep 2  # some steps first
query_loop() {  # kind path-suffix
  local kind=$1 suffix=$2 n=0 end=$((SECONDS + seconds))
  while (( SECONDS < end )); do
    curl -s -o /dev/null -w "$kind %{http_code} %{time_total}\n" --max-time 120 \
      "$http/api/jobs/live$((n % 6))/$suffix" >> "$tmp/latency" || true
    n=$((n + 1))
  done
}
touch "$tmp/latency"
if [[ ${QUERIES:-1} == 1 ]]; then  # QUERIES=0: ingest alone, the baseline
  query_loop summary summary & pids+=($!)
  query_loop summary summary & pids+=($!)
  query_loop report 'report?last=1' & pids+=($!)
  query_loop report 'report?last=1' & pids+=($!)
fi
peak=0
end=$((SECONDS + seconds))
while (( SECONDS < end )); do
  rss=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$daemon/status")
  (( rss > peak )) && peak=$rss
  sleep 0.25
done
if (( ${#pids[@]} > 6 )); then wait "${pids[@]:6}" 2>/dev/null || true; fi
hwm=$(awk '$1 == "VmHWM:" {print $2}' "/proc/$daemon/status")
events=$(curl -s "$http/api/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"].get("events_stored", "?"))')
echo "| --analysis-cache-mb $cache_mb, ${seconds} s | events stored $events | peak RSS $((peak / 1024)) MB sampled, VmHWM $((hwm / 1024)) MB |"
python3 - "$tmp/latency" <<'PY'
import collections, sys
rows = collections.defaultdict(list)
codes = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    kind, code, t = line.split()
    codes[kind][code] += 1
    if code == "200":
        rows[kind].append(float(t))
print("| query | answers by status | p50 s (200) | p99 s (200) | max s (200) |")
print("| --- | --- | --- | --- | --- |")
for kind in sorted(codes):
    t = sorted(rows[kind]) or [float("nan")]
    q = lambda p: t[min(len(t) - 1, int(p * len(t)))]
    print(f"| {kind} | {dict(codes[kind])} | {q(0.5):.2f} | {q(0.99):.2f} | {t[-1]:.2f} |")
PY
