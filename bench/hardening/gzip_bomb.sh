#!/usr/bin/env bash
# Issue 34 item 2: peak RSS and wall time of `gpuspy analyze` and `gpuspy import` on gzip bombs
# (MiB of zeros, gzip -1) below and above --max-trace-bytes (default 2 GiB, and 256 MiB).
# Usage: bench/hardening/gzip_bomb.sh GPUSPY[,GPUSPY...] [MiB...]   (default: 128 1024 3072 10240)
# Several binaries (comma-separated: before and after a change) run on the same bombs in turn.
# Prints one markdown row per probe: binary, command, bomb, limit, exit, wall s, peak RSS MB,
# stderr (end).
set -uo pipefail
IFS=, read -r -a bins <<< "$1"; shift
sizes=${*:-128 1024 3072 10240}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {  # binary command bomb-MiB limit
  local bin=$1; shift
  local cmd=$1 mib=$2 limit=$3
  local flags=()
  [[ $limit != default ]] && flags=(--max-trace-bytes $((limit << 20)))
  local argv=("$bin" analyze "${flags[@]}" --job j "$work/bomb$mib.json.gz")
  # import: nothing listens on port 1; the file is read (and refused) before anything is sent.
  [[ $cmd == import ]] && argv=("$bin" --collector 127.0.0.1:1 import "${flags[@]}" --job j "$work/bomb$mib.json.gz")
  /usr/bin/time -v -o "$work/time" "${argv[@]}" >/dev/null 2>"$work/err"
  local rc=$?
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time")
  rss=$(awk -F': ' '/Maximum resident set size/ {print int($2 / 1024)}' "$work/time")
  echo "| $bin | $cmd | $mib MiB ($(($(stat -c %s "$work/bomb$mib.json.gz") / 1024)) KiB gz) | ${limit} | $rc | $wall | $rss | $(tail -c 140 "$work/err" | tr '\n|' '  ') |"
}
echo "| binary | command | bomb (zeros) | limit (MiB) | exit | wall | peak RSS MB | stderr (end) |"
echo "| --- | --- | --- | --- | ---: | ---: | ---: | --- |"
for mib in $sizes; do
  head -c $((mib << 20)) /dev/zero | gzip -1 >"$work/bomb$mib.json.gz"
  for cmd in analyze import; do
    for bin in "${bins[@]}"; do
      run "$bin" "$cmd" "$mib" default
      run "$bin" "$cmd" "$mib" 256
    done
  done
  rm -f "$work/bomb$mib.json.gz"
done
