#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan, the whole tree instrumented: build-asan/,
# the tree `SANITIZE=1 scripts/test.sh` runs the unit tests in) and runs each for
# SECONDS_PER_TARGET (default 60), one after another. Seeds: tests/fuzz/corpus/<target>/
# (committed, read-only here) plus, for the Kineto importer, the heads of the shared real traces.
# What a run discovers goes to build-asan/corpus/<target>/ and is kept between runs. A crash is
# saved under build-asan/crashes/ and makes the script fail.
#
#   TARGETS="ingest_fuzz config_fuzz" SECONDS_PER_TARGET=600 tests/fuzz/run.sh
#
# Logs: build-asan/logs/<target>.log (libFuzzer's progress lines and -print_final_stats).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${SECONDS_PER_TARGET:-60}
targets=(${TARGETS:-kineto_trace_fuzz batch_decode_fuzz ingest_fuzz http_query_fuzz config_fuzz spill_file_fuzz})
dir=build-asan
VARIANT=asan TARGETS="${targets[*]}" scripts/build.sh "$dir"

mkdir -p "$dir/crashes" "$dir/logs"
for t in "${targets[@]}"; do mkdir -p "$dir/corpus/$t"; done
if [[ " ${targets[*]} " == *" kineto_trace_fuzz "* ]]; then
  for t in ../shared/traces/*.json.gz; do
    [[ -f "$t" ]] || continue
    # The head of each real trace (whole files are far beyond -max_len).
    gzip -dc "$t" | head -c 65536 > "$dir/corpus/kineto_trace_fuzz/shared-$(basename "$t" .json.gz).json" || true
    # And gzip'd (the file path, with inflate): a complete small stream of the same head.
    gzip -dc "$t" | head -c 16384 | gzip -c > "$dir/corpus/kineto_trace_fuzz/shared-$(basename "$t" .json.gz).gz" || true
  done
fi

failed=0
for t in "${targets[@]}"; do
  echo "== $t for ${seconds}s"
  args=(-max_total_time="$seconds" -max_len=65536 -timeout=25 -rss_limit_mb=3072
        -artifact_prefix="$dir/crashes/$t-" -print_final_stats=1)
  [[ -f tests/fuzz/dict/$t.dict ]] && args+=(-dict="tests/fuzz/dict/$t.dict")
  case $t in
    # These keep a store and the query caches across inputs, so every input "allocates more than
    # it frees" and libFuzzer would scan the heap for leaks after each: 10x slower. LeakSanitizer
    # still checks at exit. The entropic scheduler's per-feature bookkeeping cost another 3x
    # with their ~40k features per input.
    ingest_fuzz|http_query_fuzz) args+=(-detect_leaks=0 -entropic=0) ;;
  esac
  if ! "$dir/tests/fuzz/$t" "$dir/corpus/$t" "tests/fuzz/corpus/$t" "${args[@]}" \
      >"$dir/logs/$t.log" 2>&1; then
    failed=1
    echo "!! $t failed; see $dir/logs/$t.log and $dir/crashes/"
  fi
  # The last progress line (execs, cov, ft, corpus) and the final stats.
  grep -E '^#[0-9]+' "$dir/logs/$t.log" | tail -1 || true
  grep -E '^stat::' "$dir/logs/$t.log" || true
done
exit "$failed"
