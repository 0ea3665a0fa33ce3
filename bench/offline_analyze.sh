#!/usr/bin/env bash
# gpuspy analyze (no daemon) on the real traces in ../shared/traces and a generated ~200 MB trace:
# MB/s of uncompressed JSON per stage (inflate, simdjson index, walk+map, time order, analyse) and
# peak RSS, as a markdown table on stdout. Usage: bench/offline_analyze.sh [build-dir] [MB]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mb=${2:-200}
traces=${TRACES:-../shared/traces}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gen="$work/generated_${mb}mb.json"
python3 bench/make_kineto_trace.py "$traces/nccl_a100.json.gz" "$gen" "$mb" >/dev/null
gzip -6 -k "$gen"
echo "| trace | on disk MB | JSON MB | inflate | index | walk+map | order | parse+normalise | analyse | wall s | peak RSS MB | RSS / JSON |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for f in "$traces"/*.json* "$gen" "$gen.gz"; do
  # Best of 3: the machine is shared, the slowest runs measure the neighbours.
  best=""
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$work/time" "$build/viewer/cli/gpuspy" analyze --timings \
      --threads 1 "$f" >/dev/null 2>"$work/err"
    line=$(grep "MB/s of JSON" "$work/err")
    read -r wall rss_kb <"$work/time"
    if [[ -z $best ]] || awk "BEGIN{exit !($wall < ${best%% *})}"; then best="$wall $rss_kb $line"; fi
  done
  read -r wall rss_kb rest <<<"$best"
  python3 - "$f" "$wall" "$rss_kb" "$rest" <<'PY'
import re, sys, os
f, wall, rss_kb, line = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
m = re.search(r"([\d.]+) MB on disk, ([\d.]+) MB JSON; MB/s of JSON: inflate (\d+), index (\d+), "
              r"walk\+map (\d+), order (\d+), parse\+normalise (\d+), analyse (\d+)", line)
disk, js, inf, idx, walk, order, pn, an = m.groups()
rss = rss_kb / 1024
print(f"| {os.path.basename(f)} | {disk} | {js} | {inf if float(inf) > 0 else '-'} | {idx} | {walk} "
      f"| {order} | {pn} | {an} | {wall:.2f} | {rss:.0f} | {rss / max(float(js), 0.001):.2f} |")
PY
done
