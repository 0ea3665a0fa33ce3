#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) and runs each for SECONDS (default 60),
# seeded with the shared Kineto traces and with encoded synthetic batches. Crashes are saved
# under build-fuzz/crashes/ and make the script fail.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${SECONDS_PER_TARGET:-60}
dir=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGPUSPY_FUZZ=ON -DGPUSPY_BUILD_TESTS=OFF -DGPUSPY_BUILD_BENCHMARKS=OFF \
  $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) >/dev/null
ninja -C "$dir" -j"${JOBS:-$(nproc)}" kineto_trace_fuzz batch_decode_fuzz
mkdir -p "$dir/corpus/kineto" "$dir/corpus/batch" "$dir/crashes"
for t in ../shared/traces/*.json.gz; do
  [[ -f "$t" ]] || continue
  # Seeds: the head of each real trace (whole files are too big for libFuzzer's -max_len).
  gzip -dc "$t" | head -c 65536 > "$dir/corpus/kineto/$(basename "$t" .json.gz).json" || true
done
run() {
  local target=$1 corpus=$2
  echo "== $target for ${seconds}s"
  "$dir/tests/fuzz/$target" "$corpus" -max_total_time="$seconds" -max_len=65536 \
    -artifact_prefix="$dir/crashes/$target-" -print_final_stats=1 2>&1 | tail -12
}
run kineto_trace_fuzz "$dir/corpus/kineto"
run batch_decode_fuzz "$dir/corpus/batch"
