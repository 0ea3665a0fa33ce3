#!/usr/bin/env bash
# Scaling curves: how gpuspy's costs grow with
#   1. events per step        -> analysis time per step        (analysis_bench BM_StepReportScaling)
#   2. concurrent producers    -> collector ingest events/s     (bench/ingest_bench.sh)
#   3. events stored           -> query latency (report of the last 10 steps, job summary)
# Writes bench/results/scaling-<date>.md and PNG plots next to it (gnuplot).
# Usage: bench/scaling.sh [build-dir]   (MAX_STORED=N caps curve 3, default 10^7 events)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
max_stored=${MAX_STORED:-10000000}
command -v gnuplot >/dev/null || { echo "bench/scaling.sh needs gnuplot (apt-get install gnuplot-nox)" >&2; exit 1; }
day=$(date +%Y-%m-%d)
res=bench/results
out=$res/scaling-$day.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. Analysis vs events per step.
"$build/bench/analysis_bench" --benchmark_filter=BM_StepReportScaling --benchmark_min_time=0.2 \
  --benchmark_out="$tmp/analysis.json" --benchmark_out_format=json >/dev/null
python3 - "$tmp/analysis.json" >"$tmp/analysis.dat" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    print(int(b["events_per_step"]), b["real_time"])  # ms
PY

# 2. Ingest vs producers.
: >"$tmp/ingest.dat"
for r in 1 2 4 8 16; do
  line=$(bench/ingest_bench.sh "$build" "$r" $((160 / r)))
  rate=$(sed -E 's/.*\| ([0-9.]+) M events\/s.*/\1/' <<<"$line")
  echo "$r $rate" >>"$tmp/ingest.dat"
done

# 3. Query latency vs events stored (one daemon, growing job).
"$build/collector/server/gpuspyd" --listen 127.0.0.1:0 --unix "" --http "" --data-dir "$tmp/store" \
  --port-file "$tmp/port" --log-level warn &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [[ -s $tmp/port ]] && break; sleep 0.05; done
addr=127.0.0.1:$(cat "$tmp/port")
: >"$tmp/query.dat"
stored=0 round=0
for target in 100000 1000000 10000000 100000000; do
  (( target > max_stored )) && break
  while (( stored < target )); do
    round=$((round + 1))
    # launch_storm: ~7.5k events per step and rank, so ~30k per step of 4 ranks.
    steps=$(( (target - stored) / 30000 + 1 ))
    (( steps > 100 )) && steps=100
    (( steps < 3 )) && steps=3
    n=$("$build/tools/replay/gpuspy-replay" --collector "$addr" --job "grow" --ranks 4 --steps "$steps" \
          --scenario launch_storm --seed "$round" | awk '{s += $3} END {print s}')
    stored=$((stored + n))
  done
  t() { local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
  # Each query first right after the data grew (its new steps analysed then), then again.
  last_cold=$(t "$build/viewer/cli/gpuspy" --collector "$addr" --timeout 600 report --job grow --last 10)
  last_warm=$(t "$build/viewer/cli/gpuspy" --collector "$addr" --timeout 600 report --job grow --last 10)
  summary=$(t "$build/viewer/cli/gpuspy" --collector "$addr" --timeout 600 summary --job grow)
  echo "$stored $last_cold $last_warm $summary" >>"$tmp/query.dat"
done

# Incremental: a few new steps on top of the biggest job -> only they are analysed.
"$build/tools/replay/gpuspy-replay" --collector "$addr" --job grow --ranks 4 --steps 3 \
  --scenario launch_storm --seed 999999 >/dev/null
sleep 0.2
inc=$(t "$build/viewer/cli/gpuspy" --collector "$addr" --timeout 600 report --job grow --last 10)
echo "$stored $inc" >"$tmp/incremental.dat"

plot() {  # $1 png, $2 title, $3 xlabel, $4 ylabel, $5 logscale axes, $6.. plot clauses
  local png=$1 title=$2 xl=$3 yl=$4 logs=$5
  shift 5
  gnuplot <<GP
set terminal pngcairo size 800,500 noenhanced
set output "$png"
set title "$title"
set xlabel "$xl"
set ylabel "$yl"
set grid
set key top left
${logs:+set logscale $logs}
plot $*
GP
}
plot "$res/scaling-analysis-$day.png" "Step report time vs events in the step" "events in the step" \
  "ms per step report" xy "'$tmp/analysis.dat' using 1:2 with linespoints title 'breakdown + every detector'"
plot "$res/scaling-ingest-$day.png" "Collector ingest vs concurrent producers (2 cores, durable)" \
  "producers" "M events/s stored" x "'$tmp/ingest.dat' using 1:2 with linespoints title 'gpuspy-replay -> gpuspyd'"
plot "$res/scaling-query-$day.png" "Query latency vs events stored" "events stored" "ms (CLI, end to end)" xy \
  "'$tmp/query.dat' using 1:2 with linespoints title 'report --last 10 (first, right after the data)', '' using 1:3 with linespoints title 'report --last 10 (warm)', '' using 1:4 with linespoints title 'summary (warm)'"

{
  echo "# gpuspy scaling curves — $day"
  echo
  echo "Machine: $(nproc) cores, $(uname -sr). Reproduce: \`bench/scaling.sh\`."
  echo
  echo "## Analysis time vs events per step ($(basename "$res/scaling-analysis-$day.png"))"
  echo
  echo "| events in the step | ms per report | us per 1k events |"
  echo "|---|---|---|"
  awk '{printf "| %d | %.2f | %.0f |\n", $1, $2, $2 * 1e6 / $1}' "$tmp/analysis.dat"
  echo
  echo "## Ingest vs producers ($(basename "$res/scaling-ingest-$day.png"))"
  echo
  echo "| producers | M events/s stored (durable, zstd at rest) |"
  echo "|---|---|"
  awk '{printf "| %d | %.2f |\n", $1, $2}' "$tmp/ingest.dat"
  echo
  echo "## Query latency vs events stored ($(basename "$res/scaling-query-$day.png"))"
  echo
  echo "| events stored | report --last 10, first query right after the data arrived, ms | again, ms | summary ms |"
  echo "|---|---|---|---|"
  awk '{printf "| %d | %d | %d | %d |\n", $1, $2, $3, $4}' "$tmp/query.dat"
  echo
  awk '{printf "Then ~90 k new events (3 steps of 4 new ranks) on the %d-event job: the next `report --last 10` took %d ms (only the new steps are analysed).\n", $1, $2}' "$tmp/incremental.dat"
} | tee "$out"
echo "written: $out and its PNGs"
