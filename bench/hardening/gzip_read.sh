#!/usr/bin/env bash
# Issue 34 item 2, the other side of the bomb: what learning a gzip file's size before inflating
# it costs an honest trace under --max-trace-bytes. `gpuspy analyze --timings` on generated Kineto
# traces (nccl_a100 repeated, bench/make_kineto_trace.py; gzip -6), each binary in turn, REPEAT
# rounds interleaved; prints every run: binary, trace, wall s, peak RSS MB, inflate MB/s of JSON
# (the count pass, where there is one, is inside the inflate time).
# Usage: bench/hardening/gzip_read.sh "MB..." GPUSPY...   e.g. gzip_read.sh "3 200" old/gpuspy new/gpuspy
set -uo pipefail
cd "$(dirname "$0")/../.."
sizes=$1; shift
repeat=${REPEAT:-3}
traces=${TRACES:-../shared/traces}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| binary | trace | JSON MB | gz MB | wall s | peak RSS MB | inflate MB/s |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
for mb in $sizes; do
  gen="$work/gen${mb}.json"
  python3 bench/make_kineto_trace.py "$traces/nccl_a100.json.gz" "$gen" "$mb" >/dev/null
  gzip -6 "$gen"
  for _ in $(seq "$repeat"); do
    for bin in "$@"; do
      /usr/bin/time -v -o "$work/time" "$bin" analyze --timings --job j "$gen.gz" >/dev/null 2>"$work/err"
      wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time")
      rss=$(awk -F': ' '/Maximum resident set size/ {print int($2 / 1024)}' "$work/time")
      inflate=$(sed -n 's/.*MB\/s of JSON: inflate \([0-9]*\),.*/\1/p' "$work/err" | head -1)
      json=$(sed -n 's/.*MB on disk, \([0-9.]*\) MB JSON.*/\1/p' "$work/err" | head -1)
      echo "| $bin | gen${mb}.json.gz | $json | $(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$gen.gz") / 1e6}") | $wall | $rss | $inflate |"
    done
  done
  rm -f "$gen.gz"
done
