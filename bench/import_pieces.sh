#!/usr/bin/env bash
# Reading a large Kineto trace in pieces (kTracePieceBytes) against as one document: seconds,
# MB/s of JSON through read+parse+normalise (ReadKinetoTrace: inflate, index, walk+map, order),
# and peak RSS, on a generated trace (nccl_a100 repeated, bench/make_kineto_trace.py), plain and
# gzip'd. Runs interleaved, REPEAT times, best time of each (the machine is shared).
# Usage: bench/import_pieces.sh [build-dir] [MB]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mb=${2:-200}
repeat=${REPEAT:-3}
traces=${TRACES:-../shared/traces}
bench=$build/bench/import_bench
[[ -x $bench ]] || { echo "missing $bench: build first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gen="$work/generated_${mb}mb.json"
python3 bench/make_kineto_trace.py "$traces/nccl_a100.json.gz" "$gen" "$mb" >/dev/null
gzip -6 -k "$gen"
declare -A best
for _ in $(seq "$repeat"); do
  for f in "$gen" "$gen.gz"; do
    for piece in 0 default; do
      args=()
      [[ $piece == 0 ]] && args=(--piece-bytes 0)
      row=$("$bench" "${args[@]}" "$f")
      key="$f $piece"
      secs=$(awk -F'|' '{gsub(/[ s]/, "", $5); print $5}' <<<"$row")
      prev=${best[$key]:-}
      if [[ -z $prev ]] || awk "BEGIN{exit !($secs < $(awk -F'|' '{gsub(/[ s]/, "", $5); print $5}' <<<"$prev"))}"; then
        best[$key]=$row
      fi
    done
  done
done
echo "| input | JSON | trace events | time | throughput | events/s | peak RSS |"
echo "|---|---|---|---|---|---|---|"
for f in "$gen" "$gen.gz"; do
  for piece in 0 default; do echo "${best[$f $piece]}"; done
done
