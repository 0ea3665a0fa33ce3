# Sourced by the bench scripts that feed a throwaway gpuspyd (gRPC only, embedded store):
#   start_gpuspyd BUILD_DIR WORK_DIR   starts it in WORK_DIR on a free port and waits for it;
#                                      sets $daemon (its pid) and $addr (host:port)
# The caller's EXIT trap kills "$daemon" (with_gpuspyd sets one).
start_gpuspyd() {
  "$1/collector/server/gpuspyd" --listen 127.0.0.1:0 --unix "" --http "" --data-dir "$2/store" \
    --port-file "$2/port" --log-level warn 2>"$2/gpuspyd.log" &
  daemon=$!
  for _ in $(seq 100); do [[ -s $2/port ]] && break; sleep 0.05; done
  addr=127.0.0.1:$(cat "$2/port")
}

# require_built FILE...: stops with a hint when something is not built.
require_built() {
  for f in "$@"; do
    [[ -e $f ]] || { echo "missing $f: build first (scripts/build.sh)" >&2; exit 1; }
  done
}

# with_gpuspyd BUILD_DIR: a work dir ($tmp) and a gpuspyd in it, both gone when the script exits.
with_gpuspyd() {
  tmp=$(mktemp -d)
  daemon=
  trap 'kill $daemon 2>/dev/null || true; rm -rf "$tmp"' EXIT
  start_gpuspyd "$1" "$tmp"
}
