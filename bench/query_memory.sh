#!/usr/bin/env bash
# gpuspyd's memory while one large job is read back whole (issue 22: one events request of a
# 5 M-event job took RSS from 0.74 to 3.55 GB). Ingests a synthetic job (gpuspy-replay
# launch_storm, ~7,560 events a step; 660 steps = ~5 M events), then, one phase at a time:
#   events-http   every event through GET /api/jobs/J/events (limit=5000000, then next_cursor
#                 while there is one: a gpuspyd without pages answers one page)
#   events-grpc   `gpuspy events --limit 0` (paged); --limit 5000000 for a CLI without pages
#   trace-http    GET /api/jobs/J/trace (the whole job)
#   trace-cli     `gpuspy export` (the whole job)
# and prints per phase: wall time, bytes received, gpuspyd's VmHWM (its peak RSS, reset before
# each phase through /proc/PID/clear_refs) and VmRSS after, from /proc/PID/status.
# usage: [REPLAY=gpuspy-replay] bench/query_memory.sh [BUILD_DIR] [STEPS] [paged|unpaged]
# (unpaged: for a gpuspyd and CLI from before pages, e.g. a build of main before issue 22)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build}")
steps=${2:-660}
mode=${3:-paged}
tmp=$(mktemp -d /tmp/gpuspy-query-memory.XXXXXX)
"$bin/collector/server/gpuspyd" --listen 127.0.0.1:0 --unix "" --http 127.0.0.1:0 \
  --data-dir "$tmp/store" --port-file "$tmp/port" --http-port-file "$tmp/hport" \
  --log-level warn 2> "$tmp/log" &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 200); do [[ -s "$tmp/port" && -s "$tmp/hport" ]] && break; sleep 0.05; done
addr="127.0.0.1:$(cat "$tmp/port")"
http="http://127.0.0.1:$(cat "$tmp/hport")"
kb() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$daemon/status"; }
mb() { echo "$(( $(kb "$1") / 1024 ))"; }

"${REPLAY:-$bin/tools/replay/gpuspy-replay}" --collector "$addr" --job big --steps "$steps" \
  --scenario launch_storm --batch-events 4096 > "$tmp/replay.log"
events=$(awk '{s += $3} END {print s}' "$tmp/replay.log")
# The first report analyses the job (the analysis cache is another budget: --analysis-cache-mb);
# done before the phases, so that they measure reading, not analysing.
curl -sf "$http/api/jobs/big/summary" > /dev/null
echo "| job | $events events | RSS after ingest and analysis $(mb VmRSS) MB (peak so far $(mb VmHWM) MB) |"
echo "| phase | wall s | bytes | requests | gpuspyd peak RSS MB | RSS after MB | result |"
echo "| --- | --- | --- | --- | --- | --- | --- |"

phase() {  # name, command...: runs the command, prints the row; the command prints "bytes requests result"
  local name=$1; shift
  echo 5 > "/proc/$daemon/clear_refs"  # VmHWM := VmRSS
  local before start end out
  before=$(mb VmRSS)
  start=$(date +%s.%N)
  out=$("$@" 2>&1 | tail -1) || true
  end=$(date +%s.%N)
  read -r bytes requests result <<< "$out"
  printf '| %s | %.1f | %s | %s | %s (from %s) | %s | %s |\n' "$name" "$(echo "$end - $start" | bc)" \
    "$bytes" "$requests" "$(mb VmHWM)" "$before" "$(mb VmRSS)" "$result"
}

events_http() {
  python3 - "$http/api/jobs/big/events" <<'PY'
import re, sys, urllib.parse, urllib.request
url, cursor, total, requests = sys.argv[1], "", 0, 0
while True:
    q = "?limit=5000000" + ("&cursor=" + urllib.parse.quote(cursor) if cursor else "")
    try:
        r = urllib.request.urlopen(url + q, timeout=600)
    except Exception as e:
        print(total, requests, f"failed: {e}".replace(" ", "_")); sys.exit(0)
    requests += 1
    tail = b""
    while chunk := r.read(1 << 20):
        total += len(chunk)
        tail = (tail + chunk)[-4096:]
    # Fields come in field-number order: next_cursor is near the end of the page.
    m = re.search(rb'"next_cursor":\s*"([^"]*)"', tail)
    if not m:
        break
    cursor = m.group(1).decode()
print(total, requests, "ok")
PY
}

events_grpc() {
  local limit=0
  [[ $mode == unpaged ]] && limit=5000000
  local n
  if n=$("$bin/viewer/cli/gpuspy" --collector "$addr" --timeout 600 events --job big --limit "$limit" \
         2> "$tmp/cli.err" | grep -vc '^#'); then
    echo "- - ok:_${n}_events_printed"
  else
    echo "- - failed:_$(head -c 120 "$tmp/cli.err" | tr ' \n' '__')"
  fi
}

trace_http() {
  local code
  code=$(curl -s -o "$tmp/trace.json" -w '%{http_code}' "$http/api/jobs/big/trace")
  echo "$(stat -c %s "$tmp/trace.json") 1 http_${code},_ends_$(tail -c 3 "$tmp/trace.json" | tr -d '\n')"
}

trace_cli() {
  if "$bin/viewer/cli/gpuspy" --collector "$addr" --timeout 600 export --job big -o "$tmp/cli.json" \
       > "$tmp/export.out" 2>&1; then
    local same=differs_from_trace-http
    cmp -s "$tmp/cli.json" "$tmp/trace.json" && same=same_as_trace-http
    echo "$(stat -c %s "$tmp/cli.json") - ok,_${same}"
  else
    echo "- - failed:_$(head -c 120 "$tmp/export.out" | tr ' \n' '__')"
  fi
  rm -f "$tmp/cli.json"
}

phase events-http events_http
phase events-grpc events_grpc
phase trace-http trace_http
phase trace-cli trace_cli
