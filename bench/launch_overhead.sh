#!/usr/bin/env bash
# Per-launch host cost of gpuspy on a launch-bound loop, in the fake-CUDA harness:
#   not injected | injected, dormant (GPUSPY_MODE=ondemand) | injected, capturing (always)
# Each configuration runs `fake_train --launch-loop N` REPEAT times; the median ns/launch is
# reported, and the overhead as the difference to "not injected" measured in the same run.
# Usage: bench/launch_overhead.sh [build-dir]   (LAUNCHES, REPEAT override the defaults)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
launches=${LAUNCHES:-2000000}
repeat=${REPEAT:-7}
train=$build/tests/fake_cuda/fake_train
shim=$build/lib/libgpuspy.so
cupti=$build/fake_cuda/lib/libcupti.so.13
source bench/gpuspyd_lib.sh
require_built "$train" "$shim" "$cupti" "$build/collector/server/gpuspyd"
with_gpuspyd "$build"

once() {  # $1 = mode (none|ondemand|always): prints ns/launch of one run
  local mode=$1 v
  if [[ $mode == none ]]; then
    v=$("$train" --launch-loop "$launches")
  else
    v=$(env LD_PRELOAD="$shim" GPUSPY_CUPTI_PATH="$cupti" GPUSPY_COLLECTOR="$addr" \
          GPUSPY_MODE="$mode" GPUSPY_JOB="launch-bench-$mode" GPUSPY_SPILL_DIR="$tmp/spill" \
          "$train" --launch-loop "$launches")
  fi
  python3 -c 'import json,sys; print(json.loads(sys.argv[1])["ns_per_launch"])' "$v"
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Interleaved (none, dormant, capturing, none, ...) so drifting machine load hits all alike.
: >"$tmp/none"; : >"$tmp/ondemand"; : >"$tmp/always"
for _ in $(seq "$repeat"); do
  for mode in none ondemand always; do once "$mode" >>"$tmp/$mode"; done
done
none=$(median <"$tmp/none")
dormant=$(median <"$tmp/ondemand")
always=$(median <"$tmp/always")
python3 - "$none" "$dormant" "$always" "$launches" "$repeat" <<'PY'
import sys
none, dormant, always = map(float, sys.argv[1:4])
print(f"| configuration | ns per launch (median of {sys.argv[5]} x {int(sys.argv[4]):,}) | overhead vs not injected |")
print("|---|---|---|")
print(f"| not injected (fake launch alone) | {none:.1f} | - |")
print(f"| injected, dormant (GPUSPY_MODE=ondemand) | {dormant:.1f} | {dormant - none:+.1f} ns ({(dormant - none) / none * 100:+.1f}%) |")
print(f"| injected, capturing (GPUSPY_MODE=always) | {always:.1f} | {always - none:+.1f} ns ({(always - none) / none * 100:+.1f}%) |")
PY
