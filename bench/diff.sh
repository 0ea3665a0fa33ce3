#!/usr/bin/env bash
# gpuspy diff on trace files (no daemon): two generated ~30 MB Kineto traces (bench/
# make_kineto_trace.py, nccl_a100 repeated; B's GEMMs 20% longer so there is a change to explain),
# plain and gzip'd, and the shared sampled_rank-0/1 pair. Wall time and peak RSS, best of 3, as a
# markdown table on stdout. Usage: bench/diff.sh [build-dir] [MB]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mb=${2:-30}
traces=${TRACES:-../shared/traces}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/make_kineto_trace.py "$traces/nccl_a100.json.gz" "$work/a.json" "$mb" >/dev/null
# B: every GEMM kernel 20% longer (names with "gemm"), the rest as in A.
python3 - "$work/a.json" "$work/b.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for e in doc["traceEvents"]:
    if e.get("cat") == "kernel" and "gemm" in str(e.get("name", "")).lower() and "dur" in e:
        e["dur"] = e["dur"] * 1.2
json.dump(doc, open(sys.argv[2], "w"))
PY
gzip -6 -k "$work/a.json" "$work/b.json"
echo "| A | B | JSON MB (A+B) | wall s | peak RSS MB | first change named |"
echo "| --- | --- | ---: | ---: | ---: | --- |"
run() {
  local a=$1 b=$2 best="" first
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$work/time" "$build/viewer/cli/gpuspy" diff "$a" "$b" >"$work/out"
    read -r wall rss_kb <"$work/time"
    if [[ -z $best ]] || awk "BEGIN{exit !($wall < ${best%% *})}"; then best="$wall $rss_kb"; fi
  done
  read -r wall rss_kb <<<"$best"
  first=$(grep -A1 "WHAT CHANGED" "$work/out" | tail -1 | sed 's/^ *//; s/  */ /g' | cut -c1-70)
  local json_mb
  json_mb=$(python3 -c "import gzip,sys; print(round(sum(len((gzip.open if p.endswith('.gz') else open)(p,'rb').read()) for p in sys.argv[1:])/1e6,1))" "$a" "$b")
  echo "| $(basename "$a") | $(basename "$b") | $json_mb | $wall | $((rss_kb / 1024)) | $first |"
}
run "$work/a.json" "$work/b.json"
run "$work/a.json.gz" "$work/b.json.gz"
run "$traces/sampled_rank-0.json.gz" "$traces/sampled_rank-1.json.gz"
