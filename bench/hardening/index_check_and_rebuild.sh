#!/bin/bash
# Issue 22 figures: ingest a synthetic store, time gpuspyd start-up (with its index check) and
# PRAGMA quick_check alone, then --rebuild-index (wall time, peak RSS).
# Usage: RANKS=16 STEPS=5000 index_check_and_rebuild.sh GPUSPYD UNUSED GPUSPY_REPLAY
set -u
NEW=$1; OLD=$2; REPLAY=$3
D=${WORK:-/tmp/gpuspy-hardening}; rm -rf $D; mkdir -p $D
$NEW --listen 127.0.0.1:0 --port-file $D/port --unix '' --http '' --data-dir $D/store --log-level warn 2>$D/log &
P=$!; for i in $(seq 100); do [ -s $D/port ] && break; sleep 0.1; done
T0=$(date +%s.%N)
$REPLAY --collector 127.0.0.1:$(cat $D/port) --job bench --ranks ${RANKS:-4} --steps ${STEPS:-1500} >/dev/null
T1=$(date +%s.%N)
kill -TERM $P; wait $P
echo "ingest_s $(echo "$T1 - $T0" | bc)"
du -sb $D/store/index.sqlite $D/store/segments
startup() {  # binary -> seconds from exec to the port file
  rm -f $D/p2; local s=$(date +%s.%N)
  $1 --listen 127.0.0.1:0 --port-file $D/p2 --unix '' --http '' --data-dir $D/store --log-level warn 2>>$D/log2 &
  local pid=$!; while [ ! -s $D/p2 ]; do sleep 0.005; done; local e=$(date +%s.%N)
  kill -TERM $pid; wait $pid; echo "$(echo "$e - $s" | bc)"
}
for r in 1 2 3; do echo "startup_s $(startup $NEW)"; /usr/bin/time -f "quick_check_s %e" sqlite3 $D/store/index.sqlite "PRAGMA quick_check(1)"; done
/usr/bin/time -f "rebuild_wall_s %e rebuild_max_rss_kb %M" $NEW --rebuild-index --data-dir $D/store
