#!/usr/bin/env bash
# Builds and runs the benchmarks; prints their table and writes bench/results/<date>.md.
set -euo pipefail
cd "$(dirname "$0")/.."
# The benchmarks are built only when asked; capture_hot_path_bench needs the fake CUPTI of tests/.
scripts/build.sh build -DGPUSPY_BUILD_TESTS=ON -DGPUSPY_BUILD_BENCHMARKS=ON >/dev/null
mkdir -p bench/results
out="bench/results/$(date +%Y-%m-%d).md"
json=$(mktemp)
build/bench/analysis_bench --benchmark_min_time=0.2 --benchmark_out="$json" --benchmark_out_format=json | tee /dev/stderr >/dev/null
python3 - "$json" "$out" <<'PY'
import json, sys, platform, datetime
data = json.load(open(sys.argv[1]))
ctx = data["context"]
lines = [f"# gpuspy benchmarks — {datetime.date.today()}", "",
         f"Machine: {ctx.get('num_cpus')} CPUs @ {ctx.get('mhz_per_cpu')} MHz, {platform.platform()}; "
         f"build: {ctx.get('library_build_type')}", "",
         "| benchmark | label | time/iter | items/s | counters |", "|---|---|---|---|---|"]
for b in data["benchmarks"]:
    counters = {k: v for k, v in b.items() if k in ("events_per_step", "time_per_1k_events", "wire_bytes_per_event")}
    cs = ", ".join(f"{v*1e6:.0f} us per 1k events" if k == "time_per_1k_events" else f"{k}={v:,.1f}"
                   for k, v in counters.items())
    ips = b.get("items_per_second")
    lines.append(f"| {b['name']} | {b.get('label','')} | {b['real_time']:.1f} {b['time_unit']} | "
                 f"{ips/1e6:.1f} M/s | {cs} |" if ips else f"| {b['name']} | {b.get('label','')} | {b['real_time']:.1f} {b['time_unit']} | | {cs} |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
rm -f "$json"
{
  echo
  echo "## Kineto import (bench/import_bench: one run per input)"
  echo
  synth=$(mktemp /tmp/gpuspy-import-bench.XXXXXX.json)
  build/bench/import_bench --generate "$synth" "${IMPORT_MB:-200}"
  build/bench/import_bench --header ../shared/traces/nccl_a100.json.gz
  build/bench/import_bench "$synth"
  rm -f "$synth"
  echo
  echo "## Cross-rank pass (bench/cross_rank_bench: ranks x steps x collectives per rank per step)"
  echo
  echo "| job | wall | rate | input held | added by the pass | straggler named |"
  echo "|---|---|---|---|---|---|"
  build/bench/cross_rank_bench 8 100 200
  build/bench/cross_rank_bench 64 100 2000
  echo
  echo "## Collector ingest (bench/ingest_bench.sh: gpuspy-replay producers -> gpuspyd, loopback)"
  echo
  echo "| measure | events | wall (incl. generating them) | throughput | gpuspyd CPU | stored |"
  echo "|---|---|---|---|---|---|"
  bench/ingest_bench.sh build 4 40
  bench/ingest_bench.sh build 8 40
  echo
  echo "## Wire and storage size (bench/size_bench: real traces imported, and the synthetic mix)"
  echo
  build/bench/size_bench --header ../shared/traces/*.json.gz --synthetic
  echo
  echo "## In-process hot path (bench/capture_hot_path_bench: CUPTI buffer -> events -> wire batch)"
  echo
  echo '```'
  build/bench/capture_hot_path_bench --benchmark_min_time=0.3 2>&1 | grep -E "^(BM_|Benchmark)"
  echo '```'
  echo
  echo "## Per-launch cost in the application (bench/launch_overhead.sh, fake CUDA)"
  echo
  bench/launch_overhead.sh build
  echo
  echo "## Live reports (bench/live_latency.py: fake CUDA under the real injection path)"
  echo
  echo "| measure | sample | median | p90 | max |"
  echo "|---|---|---|---|---|"
  python3 bench/live_latency.py build 20
} | tee -a "$out"
if command -v gnuplot >/dev/null; then
  bench/scaling.sh build >/dev/null && echo "scaling curves: bench/results/scaling-$(date +%Y-%m-%d).md"
else
  echo "scaling curves skipped: install gnuplot-nox to plot them (bench/scaling.sh)"
fi
echo "written: $out"
