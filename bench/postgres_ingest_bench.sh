#!/usr/bin/env bash
# Collector ingest throughput into the PostgreSQL hub store: R concurrent producers (gpuspy-replay
# ranks) stream launch-storm steps through the real gRPC ingest into gpuspyd --postgres, against a
# throwaway PostgreSQL server with its default durability (fsync=on, synchronous_commit=on,
# full_page_writes=on): an acknowledged batch is committed and flushed to disk. Prints events/s
# stored and bytes/event at rest (the gpuspy schema: tables, TOAST, indexes).
# usage: [COMPRESS=zstd|none] bench/postgres_ingest_bench.sh [BUILD_DIR] [RANKS] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}
ranks=${2:-4}
steps=${3:-40}
pgbin=${GPUSPY_POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[[ -x "$pgbin/initdb" ]] || { echo "no PostgreSQL server binaries (scripts/install-deps.sh)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/gpuspy-pg-bench.XXXXXX)
chmod 755 "$tmp"
mkdir "$tmp/data" "$tmp/sock"
as=()
if [[ $(id -u) == 0 ]]; then  # PostgreSQL refuses to run as root
  chown nobody "$tmp/data" "$tmp/sock"
  as=(runuser -u nobody --)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${as[@]}" env -C "$tmp" "$pgbin/initdb" -D "$tmp/data" -A trust -U gpuspy -E UTF8 --locale=C >/dev/null
"${as[@]}" env -C "$tmp" "$pgbin/pg_ctl" -D "$tmp/data" -l "$tmp/sock/server.log" -w \
  -o "-p $port -k $tmp/sock -c listen_addresses=''" start >/dev/null
conninfo="host=$tmp/sock port=$port user=gpuspy dbname=postgres"
daemon=
cleanup() {
  [[ -n "$daemon" ]] && { kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true; }
  "${as[@]}" env -C "$tmp" "$pgbin/pg_ctl" -D "$tmp/data" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
"$bin/collector/server/gpuspyd" --listen 127.0.0.1:0 --unix "" --http "" --postgres "$conninfo" \
  --port-file "$tmp/port" --log-level warn --compress "${COMPRESS:-zstd}" &
daemon=$!
for _ in $(seq 200); do [[ -s "$tmp/port" ]] && break; sleep 0.05; done
addr="127.0.0.1:$(cat "$tmp/port")"
start=$(date +%s.%N)
"$bin/tools/replay/gpuspy-replay" --collector "$addr" --job bench --ranks "$ranks" --steps "$steps" \
  --scenario launch_storm --batch-events 4096 > "$tmp/replay.log"
end=$(date +%s.%N)
events=$(awk '{s += $3} END {print s}' "$tmp/replay.log")
sql() { psql -qAtX -d "$conninfo" -c "$1"; }
# WAL flushes (fsyncs) while ingesting, counted once the daemon's sessions ended (and so reported
# their statistics): how many acknowledged batches one flush carried, group commit included.
kill -TERM "$daemon"; wait "$daemon" || true; daemon=
sleep 0.5
wal_syncs=$(sql "SELECT wal_sync FROM pg_stat_wal")
bytes=$(sql "SELECT sum(pg_total_relation_size(oid)) FROM pg_class WHERE relnamespace = 'gpuspy'::regnamespace AND relkind = 'r'")
batches=$(sql "SELECT count(*) FROM gpuspy.batches")
python3 - "$events" "$start" "$end" "$bytes" "$ranks" "$batches" "$wal_syncs" "${COMPRESS:-zstd}" <<'PY'
import sys
events, start, end, stored, ranks, batches, syncs = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
compress = sys.argv[8]
s = end - start
print(f"| ingest into PostgreSQL, {ranks} producers, durable (committed + WAL flushed per ack), {compress} | "
      f"{events:,} events | {batches:,} batches, {syncs:,} WAL flushes | {s:.2f} s | "
      f"{events/s/1e6:.2f} M events/s | {stored/events:.1f} B/event at rest |")
PY
