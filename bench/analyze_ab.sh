#!/usr/bin/env bash
# Two gpuspy binaries side by side on the same traces: interleaved runs (old, new, old, new ...),
# best wall time and peak RSS of each, and whether their reports are byte-identical (--json and
# the text report). Run it on a quiet machine; say which in the results.
#   bench/analyze_ab.sh OLD_GPUSPY NEW_GPUSPY [--runs N] [--threads N] TRACE...
# A trace argument may be several files joined by commas: the ranks of one job.
set -euo pipefail
old=$1 new=$2
shift 2
runs=3 threads=()
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --threads) threads=(--threads "$2"); shift 2 ;;
    *) echo "analyze_ab.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| trace | old s | new s | speed-up | old RSS MB | new RSS MB | reports |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | --- |"
for arg in "$@"; do
  IFS=, read -r -a files <<<"$arg"
  best_old="" best_new="" rss_old=0 rss_new=0
  for ((i = 0; i < runs; i++)); do
    for side in old new; do
      bin=${!side}
      /usr/bin/time -f "%e %M" -o "$work/time" "$bin" --json analyze "${threads[@]}" "${files[@]}" \
        >"$work/$side.json" 2>/dev/null
      read -r wall rss <"$work/time"
      if [[ $side == old ]]; then
        if [[ -z $best_old ]] || awk "BEGIN{exit !($wall < $best_old)}"; then best_old=$wall; fi
        rss_old=$rss
      else
        if [[ -z $best_new ]] || awk "BEGIN{exit !($wall < $best_new)}"; then best_new=$wall; fi
        rss_new=$rss
      fi
    done
  done
  "$old" analyze "${threads[@]}" "${files[@]}" >"$work/old.txt" 2>/dev/null || true
  "$new" analyze "${threads[@]}" "${files[@]}" >"$work/new.txt" 2>/dev/null || true
  same="identical"
  cmp -s "$work/old.json" "$work/new.json" || same="JSON DIFFERS"
  cmp -s "$work/old.txt" "$work/new.txt" || same="$same; TEXT DIFFERS"
  name=$(basename "${files[0]}")
  [[ ${#files[@]} -gt 1 ]] && name="$name +$((${#files[@]} - 1)) ranks"
  awk -v n="$name" -v o="$best_old" -v w="$best_new" -v ro="$rss_old" -v rn="$rss_new" -v s="$same" \
    'BEGIN{printf "| %s | %.2f | %.2f | %.2fx | %.0f | %.0f | %s |\n", n, o, w, o / w, ro / 1024, rn / 1024, s}'
done
