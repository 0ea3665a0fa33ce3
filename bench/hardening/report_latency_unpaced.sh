#!/usr/bin/env bash
# Issue 34 item 9: how long `gpuspy report --job J --last 1` (the report of a live job's most
# recent step) takes while unpaced multi-rank producers (gpuspy-replay without --batch-ms) ingest
# at full speed into one gpuspyd. Queries go round the jobs back to back until the producers end.
# Usage: bench/hardening/report_latency_unpaced.sh BUILD_DIR [JOBS] [RANKS] [STEPS]
# Prints the latency figures (ms) and what was stored; the per-query latencies go to $OUT if set.
# AFTER=N adds N queries asked once the producers have ended (each job just finished), AFTER_GAP_S
# seconds apart (then the later ones find the finished jobs analysed whole in the background).
set -uo pipefail
build=$1
jobs=${2:-3}
ranks=${3:-4}
steps=${4:-300}
source "$(dirname "$0")/../gpuspyd_lib.sh"
require_built "$build/collector/server/gpuspyd" "$build/viewer/cli/gpuspy" "$build/tools/replay/gpuspy-replay"
with_gpuspyd "$build"
producers=()
for j in $(seq "$jobs"); do
  "$build/tools/replay/gpuspy-replay" --collector "$addr" --job "unpaced-$j" --ranks "$ranks" \
    --steps "$steps" --seed "$j" >"$tmp/replay$j.log" 2>&1 &
  producers+=($!)
done
running() { for p in "${producers[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
lat=$tmp/latencies
: >"$lat"
failed=0
: >"$tmp/errors"
q=0
# Each producer generates its events before it connects: measure once every job is stored.
for j in $(seq "$jobs"); do
  until "$build/viewer/cli/gpuspy" --collector "$addr" steps --job "unpaced-$j" >/dev/null 2>&1; do
    running || break
    sleep 0.2
  done
done
start=$(date +%s%N)
while running; do
  j=$((q % jobs + 1))
  t0=$(date +%s%N)
  if "$build/viewer/cli/gpuspy" --collector "$addr" --timeout 120 --json report --job "unpaced-$j" --last 1 \
      >"$tmp/out" 2>"$tmp/err"; then
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000)) >>"$lat"
  else
    failed=$((failed + 1))
    t1=$(date +%s%N)
    echo "$(((t1 - t0) / 1000000)) ms: $(tail -n 1 "$tmp/err")" >>"$tmp/errors"
  fi
  q=$((q + 1))
done
end=$(date +%s%N)
wall=$(((end - start) / 1000000))
# AFTER=N: N more queries round the jobs once the producers ended (the reports asked as a large
# job has just finished; they took the whole-job path: 98 s for 40 M events).
after=$tmp/after
: >"$after"
for i in $(seq 0 $((${AFTER:-0} - 1))); do
  j=$((i % jobs + 1))
  t0=$(date +%s%N)
  "$build/viewer/cli/gpuspy" --collector "$addr" --timeout 300 --json report --job "unpaced-$j" --last 1 \
    >"$tmp/out" 2>"$tmp/err" || echo "after the end: $(tail -n 1 "$tmp/err")" >>"$tmp/errors"
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000)) >>"$after"
  sleep "${AFTER_GAP_S:-0}"
done
events=$("$build/viewer/cli/gpuspy" --collector "$addr" --json stats 2>/dev/null |
  python3 -c 'import json,sys; s=json.load(sys.stdin); s=s.get("stats", s); print(s.get("events_stored", s.get("eventsStored", "?")))')
[[ -n ${OUT:-} ]] && cp "$lat" "$OUT"
sort -n "$lat" | python3 -c '
import sys
v = [int(x) for x in sys.stdin if x.strip()]
if not v: print("no answered queries"); sys.exit(1)
p = lambda q: v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]
print(f"queries {len(v)}  p50 {p(0.5)} ms  p90 {p(0.9)} ms  p99 {p(0.99)} ms  max {v[-1]} ms")'
sort "$tmp/errors" | uniq -c | sort -rn | head -n 3
[[ -s $after ]] && echo "after the producers ended (ms, in order): $(tr '\n' ' ' <"$after")"
echo "failed queries $failed; measured ${wall} ms of ingest; events stored $events; jobs $jobs x ranks $ranks x steps $steps"
