#!/usr/bin/env bash
# Issue 34 probes: wall time and peak RSS of `gpuspy analyze` on N identical 1 µs kernels with no
# step markers (tests/support/stepless_trace.py), of a huge kernel name, and of a gzip bomb.
# Usage: bench/hardening/stepless.sh GPUSPY [N...]   (default N: 10000 60000 250000)
# Prints one markdown row per probe: probe, exit code, wall s, peak RSS MB, reports, last stderr line.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=$1; shift
sizes=${*:-10000 60000 250000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {  # label file [flags...]
  local label=$1 file=$2; shift 2
  /usr/bin/time -f "%e %M" -o "$work/time" timeout 300 "$bin" --json analyze "$@" "$file" \
    >"$work/out" 2>"$work/err"
  local rc=$?
  # The last line: a failed command adds "Command exited with non-zero status N" before it.
  read -r wall rss_kb < <(tail -n 1 "$work/time") || { wall=?; rss_kb=0; }
  local reports
  reports=$(python3 -c 'import json,sys
try: print(len(json.load(open(sys.argv[1]))["reports"].get("reports", [])))
except Exception: print("-")' "$work/out")
  echo "| $label | $rc | $wall | $((rss_kb / 1024)) | $reports | $(tail -c 160 "$work/err" | tr '\n|' '  ') |"
}
echo "| probe | exit | wall s | peak RSS MB | reports | stderr (end) |"
echo "| --- | ---: | ---: | ---: | ---: | --- |"
for n in $sizes; do
  python3 tests/support/stepless_trace.py "$work/s$n.json.gz" "$n"
  run "stepless $n kernels" "$work/s$n.json.gz"
done
for mib in ${NAME_MIB:-1 64}; do
  python3 tests/support/stepless_trace.py "$work/name$mib.json" 2 --name-bytes $((mib << 20))
  run "kernel name of $mib MiB" "$work/name$mib.json"
done
# 1 GiB of zeros (gzip -1: ~1 MB); the default limit, and --max-trace-bytes 64 MiB.
head -c $((${BOMB_MIB:-1024} << 20)) /dev/zero | gzip -1 >"$work/bomb.json.gz"
run "gzip bomb ${BOMB_MIB:-1024} MiB of zeros" "$work/bomb.json.gz"
run "gzip bomb, --max-trace-bytes 64 MiB" "$work/bomb.json.gz" --max-trace-bytes $((64 << 20))
# The same size of '{' and spaces: it starts like a trace, so only the size limit refuses it.
{ printf '{'; head -c $((${BOMB_MIB:-1024} << 20)) /dev/zero | tr '\0' ' '; } | gzip -1 >"$work/spaces.json.gz"
run "gzip bomb ${BOMB_MIB:-1024} MiB of '{' and spaces" "$work/spaces.json.gz"
run "gzip bomb of spaces, --max-trace-bytes 64 MiB" "$work/spaces.json.gz" --max-trace-bytes $((64 << 20))
