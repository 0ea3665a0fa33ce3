#!/usr/bin/env bash
# The host sampler's cost (inject/core/host_sampler.h), on a host-bound Python loop in the
# fake-CUDA harness: GPUSPY_HOST_SAMPLE_HZ = 0 (off), 200 (default), 1000 and 2000, interleaved
# REPEAT times. Reports the median ns per host-phase iteration (each a Python iteration plus a
# GIL-releasing C call), the slowdown against HZ=0 measured in the same run, the main thread's
# cost per sample (the core's own exit log line) and the sampler thread's CPU time.
# Usage: bench/host_sampler.sh [build-dir]   (STEPS, ITERS, REPEAT override the defaults)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
steps=${STEPS:-200}
iters=${ITERS:-20000}
repeat=${REPEAT:-5}
shim=$build/lib/libgpuspy.so
cupti=$build/fake_cuda/lib/libcupti.so.13
source bench/gpuspyd_lib.sh
require_built "$shim" "$cupti" "$build/collector/server/gpuspyd"
with_gpuspyd "$build"

once() {  # $1 = hz: appends "ns_per_iter sampler_cpu_ns samples ns_per_sample" to $tmp/$1
  local hz=$1 out
  out=$(env LD_PRELOAD="$shim" GPUSPY_CUPTI_PATH="$cupti" GPUSPY_COLLECTOR="$addr" GPUSPY_LOG=info \
          GPUSPY_HOST_SAMPLE_HZ="$hz" GPUSPY_JOB="sampler-bench-$hz" GPUSPY_SPILL_DIR="$tmp/spill" \
          python3 bench/host_sampler_workload.py "$cupti" "$steps" "$iters" 2>"$tmp/err")
  python3 - "$out" "$tmp/err" >>"$tmp/$hz" <<'PY'
import json, re, sys
r = json.loads(sys.argv[1])
log = open(sys.argv[2]).read()
m = re.search(r"host samples: (\d+) taken .* (\d+) ns each", log)
print(r["ns_per_iter"], r["sampler_cpu_ns"], m.group(1) if m else 0, m.group(2) if m else 0, r["host_s"])
PY
}

rates=(0 200 1000 2000)
for hz in "${rates[@]}"; do : >"$tmp/$hz"; done
# Interleaved, in a different order each round, so drifting load and position hit all alike.
for _ in $(seq "$repeat"); do
  for hz in $(printf '%s\n' "${rates[@]}" | shuf); do once "$hz"; done
done
python3 - "$tmp" "$steps" "$iters" "$repeat" "${rates[@]}" <<'PY'
import statistics, sys
tmp, steps, iters, repeat, rates = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
rows = {hz: [list(map(float, l.split())) for l in open(f"{tmp}/{hz}")] for hz in rates}
base = statistics.median(r[0] for r in rows["0"])
print(f"| GPUSPY_HOST_SAMPLE_HZ | ns per host iteration (median of {repeat}) | vs off | samples per run | main-thread ns per sample | sampler thread CPU per s of host phase |")
print("|---|---|---|---|---|---|")
for hz in rates:
    ns = statistics.median(r[0] for r in rows[hz])
    samples = statistics.median(r[2] for r in rows[hz])
    per = statistics.median(r[3] for r in rows[hz])
    cpu = statistics.median(r[1] / r[4] for r in rows[hz]) / 1e6
    vs = "-" if hz == "0" else f"{(ns - base) / base * 100:+.2f}%"
    print(f"| {hz} | {ns:.1f} | {vs} | {samples:.0f} | {per:.0f} | {cpu:.2f} ms |")
print(f"\n{steps} steps x {iters} iterations a run.")
PY
