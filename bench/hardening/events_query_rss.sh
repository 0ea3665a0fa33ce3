#!/bin/bash
# RSS of gpuspyd around one GET /api/jobs/bench/events?limit=N on the store that
# index_check_and_rebuild.sh left in $WORK (default /tmp/gpuspy-hardening). Usage: events_query_rss.sh GPUSPYD N
set -u
BIN=$1; N=$2; D=${WORK:-/tmp/gpuspy-hardening}
rm -f $D/p3 $D/h3
$BIN --listen 127.0.0.1:0 --port-file $D/p3 --http 127.0.0.1:0 --http-port-file $D/h3 --unix '' --data-dir $D/store --log-level warn 2>$D/log3 &
P=$!; while [ ! -s $D/p3 ]; do sleep 0.05; done
rss() { grep -E "^$1" /proc/$P/status | awk '{print $2}'; }
echo "rss_before_kb $(rss VmRSS)"
S=$(date +%s.%N)
curl -s -o $D/events.json -w "http_status %{http_code} bytes %{size_download}\n" "http://127.0.0.1:$(cat $D/h3)/api/jobs/bench/events?limit=$N"
E=$(date +%s.%N)
echo "query_s $(echo "$E - $S" | bc) rss_peak_kb $(rss VmHWM) rss_after_kb $(rss VmRSS)"
kill -TERM $P; wait $P; rm -f $D/events.json
