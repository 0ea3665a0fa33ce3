#!/usr/bin/env bash
# gpuspy attach --pid: how long the target's borrowed thread is stopped, seen from both sides, and
# how long from the command to the first event stored. Targets are started without any gpuspy
# environment. Markdown table on stdout. Usage: bench/attach.sh [build-dir] [runs]
#   pause: attach_target "gaps" (fake libcupti preloaded so that it counts as a CUDA process) reads
#          the clock in a tight loop and reports its longest gap; the CLI reports the ptrace stop.
#   first event: fake_train; `gpuspy attach --pid P --steps 1 --detach`, then `gpuspy jobs` polled
#          every 10 ms until the process's event count is non-zero.
#   START_TIMEOUT (default 200ms, the --pid default): how long the window waits for an NVTX step.
#   baseline: the same "gaps" loop with no attach, to tell the stop from the scheduler's noise.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-5}
work=$(mktemp -d)
gpuspy="$build/viewer/cli/gpuspy"
export GPUSPY_INJECT_LIB="$PWD/$build/lib/libgpuspy_inject.so"
fake_dir="$PWD/$build/fake_cuda/lib"
"$build/collector/server/gpuspyd" --listen 127.0.0.1:0 --port-file "$work/port" --http "" --unix "" \
  --data-dir "$work/data" >"$work/gpuspyd.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.05; done
collector="127.0.0.1:$(cat "$work/port")"
now_ms() { date +%s%3N; }

echo "| run | stop seen by the CLI (us) | longest gap seen by the target (us) | same target, no attach (us) | registered (ms) | command -> first event stored (ms) |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
for i in $(seq "$runs"); do
  # The same loop left alone: what the machine's scheduler alone costs it.
  LD_PRELOAD="$fake_dir/libcupti.so.13" "$build/tests/unit/attach_target" gaps 1500 >"$work/base.out"
  base_us=$(sed -n 's/.*max_gap_us \([0-9]*\).*/\1/p' "$work/base.out")
  LD_PRELOAD="$fake_dir/libcupti.so.13" "$build/tests/unit/attach_target" gaps 3000 >"$work/gaps.out" &
  target=$!
  sleep 0.5
  "$gpuspy" --collector "$collector" attach --pid "$target" --duration 1s --detach --job "bench-gaps-$i" >"$work/a.out"
  wait "$target"
  stop_us=$(sed -n 's/.*stopped for \([0-9]*\) us.*/\1/p' "$work/a.out")
  gap_us=$(sed -n 's/.*max_gap_us \([0-9]*\).*/\1/p' "$work/gaps.out")

  "$build/tests/fake_cuda/fake_train" --until-signal --handle-signals --kernels 8 --sleep-us 20000 \
    >/dev/null 2>&1 &
  train=$!
  sleep 0.5
  start=$(now_ms)
  "$gpuspy" --collector "$collector" attach --pid "$train" --steps 1 --detach --start-timeout "${START_TIMEOUT:-200ms}" --job "bench-first-$i" >"$work/b.out"
  reg_ms=$(sed -n 's/.*after \([0-9]*\) ms.*/\1/p' "$work/b.out")
  first=""
  for _ in $(seq 1000); do
    events=$("$gpuspy" --collector "$collector" --json jobs --job "bench-first-$i" 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(int(p.get("event_count", 0)) for j in d.get("jobs", []) if j.get("job_id") == sys.argv[1] for p in j.get("processes", [])))' "bench-first-$i" 2>/dev/null || echo 0)
    if [[ ${events:-0} -gt 0 ]]; then first=$(( $(now_ms) - start )); break; fi
    sleep 0.01
  done
  kill -TERM "$train"; wait "$train" || true
  echo "| $i | $stop_us | $gap_us | $base_us | $reg_ms | ${first:-never} |"
done
