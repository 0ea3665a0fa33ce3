#!/usr/bin/env bash
# The demo's scenarios as trace files, for the offline benchmarks' byte-identity checks
# (bench/analyze_ab.sh): each scenario replayed into a throwaway gpuspyd and exported with
# `gpuspy export` (Perfetto/Chrome JSON, which `gpuspy analyze` reads like a Kineto trace).
# Single-rank scenarios give OUT/SCENARIO.json.gz; multi-rank ones one file per rank,
# OUT/SCENARIO_rank-N.json.gz.
#   bench/demo_traces.sh [build-dir] OUT_DIR [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:?usage: bench/demo_traces.sh [build-dir] OUT_DIR [STEPS]}
steps=${3:-12}
# shellcheck source=bench/gpuspyd_lib.sh
source bench/gpuspyd_lib.sh  # with_gpuspyd sets $addr
require_built "$build/collector/server/gpuspyd" "$build/viewer/cli/gpuspy" "$build/tools/replay/gpuspy-replay"
with_gpuspyd "$build"
mkdir -p "$out"
single=(healthy sync_stall launch_storm copy_heavy input_stall fp32_gemm alloc_churn unfused_mlp
        eager_attention memory_leak host_bound compiled_mlp sdpa_attention empty_cache item_metrics
        clip_per_param)
multi=(straggler_compute straggler_input exposed_comm comm_storm)
for s in "${single[@]}"; do
  "$build/tools/replay/gpuspy-replay" --collector "$addr" --job "$s" --scenario "$s" --steps "$steps" >/dev/null
  "$build/viewer/cli/gpuspy" --collector "$addr" export --job "$s" -o "$out/$s.json.gz" >/dev/null 2>&1
done
for s in "${multi[@]}"; do
  "$build/tools/replay/gpuspy-replay" --collector "$addr" --job "$s" --scenario "$s" --steps "$steps" \
    --ranks 4 >/dev/null
  for r in 0 1 2 3; do
    "$build/viewer/cli/gpuspy" --collector "$addr" export --job "$s" --rank "$r" \
      -o "$out/${s}_rank-$r.json.gz" >/dev/null 2>&1
  done
done
echo "trace files in $out: $(find "$out" -maxdepth 1 -name '*.json.gz' | wc -l)"
