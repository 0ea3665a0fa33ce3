#!/usr/bin/env bash
# gpuspy analyze against Holistic Trace Analysis (HTA, github.com/facebookresearch/HolisticTraceAnalysis)
# on the same traces, interleaved runs (HTA, gpuspy 1 thread, gpuspy all cores, HTA, ...), best
# wall time of N and peak RSS (/usr/bin/time "%e %M") of each, as a markdown table.
#   HTA side (bench/hta/run_hta.py, one fresh Python process per run): import hta, parse
#     (TraceAnalysis construction), get_idle_time_breakdown (all ranks), get_gpu_kernel_breakdown,
#     get_temporal_breakdown; visualize=False, HTA's defaults otherwise (stdlib json parser).
#     Its wall time includes starting Python and importing pandas; the last column splits it.
#   gpuspy side: gpuspy --json analyze --threads 1 FILES, and the same with the default threads.
# Usage:
#   bench/hta_side_by_side.sh [--runs N] [--gpuspy PATH] [--python PATH] [--hta-backend json|ijson] TRACE...
# A TRACE is a Kineto .json or .json.gz, or several joined by commas: the ranks of one job (HTA
# reads each file's rank from its "distributedInfo"). HTA_SRC names HTA's source tree (default
# /work/hta-src; its hta/ is put on PYTHONPATH). --python defaults to /usr/bin/python3 (Debian's
# python3-pandas etc. live there). Setup and numbers: bench/README.md. Run it on a quiet machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=3 gpuspy="$here/../build/viewer/cli/gpuspy" python=/usr/bin/python3 backend=json
traces=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --gpuspy) gpuspy=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --hta-backend) backend=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    --*) echo "hta_side_by_side.sh: unknown option $1" >&2; exit 2 ;;
    *) traces+=("$1"); shift ;;
  esac
done
die() { echo "hta_side_by_side.sh: $*" >&2; exit 1; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs wants a positive integer, not $runs"
[[ ${#traces[@]} -gt 0 ]] || die "no trace given (usage: see the header of $0)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time missing (apt-get install time)"
[[ -x $python ]] || command -v "$python" >/dev/null || die "python not found: $python"
export HTA_SRC=${HTA_SRC:-/work/hta-src}
driver="$here/hta/run_hta.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$driver" --check >"$work/info" 2>"$work/check_err" || die "$(head -1 "$work/check_err")"

# The binary may be relinked under us by a concurrent build: wait for it a while.
wait_gpuspy() {
  local i
  for ((i = 0; i < 60; i++)); do [[ -x $gpuspy ]] && return 0; sleep 2; done
  die "gpuspy binary not found: $gpuspy (build it or pass --gpuspy)"
}
wait_gpuspy
# field FILE EXPR: a Python expression over the JSON object d in FILE
field() { "$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a < b)}'; }

cores=$(nproc)
echo "HTA $(field "$work/info" 'd["hta_version"]') at $(field "$work/info" 'd["hta_commit"]') ($HTA_SRC; backend $backend);" \
  "Python $(field "$work/info" 'd["python"]'), pandas $(field "$work/info" 'd["pandas"]'), numpy $(field "$work/info" 'd["numpy"]');" \
  "gpuspy $gpuspy; $cores cores; best of $runs; $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "| trace | JSON MB | HTA s | HTA RSS MB | gpuspy s (1 thread) | gpuspy s ($cores threads) | speed-up (1 thread) | speed-up ($cores threads) | gpuspy RSS MB (1 / $cores threads) | RSS ratio HTA/gpuspy (1 / $cores threads) | HTA s: import / parse / idle / kernels / temporal |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
for arg in "${traces[@]}"; do
  IFS=, read -r -a files <<<"$arg"
  bytes=0
  for f in "${files[@]}"; do
    [[ -r $f ]] || die "cannot read $f"
    if [[ $f == *.gz ]]; then n=$(gzip -dc "$f" | wc -c); else n=$(stat -c %s "$f"); fi
    bytes=$((bytes + n))
  done
  name=$(basename "${files[0]}")
  [[ ${#files[@]} -gt 1 ]] && name="$name +$((${#files[@]} - 1)) ranks"
  hta_best="" hta_rss=0 hta_err="" hta_phases=""
  declare -A g_best=() g_rss=() g_err=()
  for ((i = 0; i < runs; i++)); do
    if [[ -z $hta_err ]]; then
      rc=0
      /usr/bin/time -f "%e %M" -o "$work/time" "$python" "$driver" --backend "$backend" "${files[@]}" \
        >"$work/hta.out" 2>"$work/hta.err" || rc=$?
      read -r wall rss < <(tail -1 "$work/time")
      grep '^{' "$work/hta.out" | tail -1 >"$work/hta.json" || true
      if [[ $rc -ne 0 || ! -s $work/hta.json ]] || [[ $(field "$work/hta.json" 'd.get("ok")') != True ]]; then
        [[ -s $work/hta.json ]] && hta_err=$(field "$work/hta.json" 'd.get("error", "")')
        if [[ -z $hta_err ]]; then
          hta_err="exit $rc$(head -1 "$work/time" | grep -o ' signal [0-9]*' || true): $(tail -1 "$work/hta.err" | cut -c1-160)"
        fi
      else
        if [[ -z $hta_best ]] || lt "$wall" "$hta_best"; then
          hta_best=$wall
          hta_phases=$(field "$work/hta.json" \
            '" / ".join("%.2f" % d["phases"][k] for k in ("import", "parse", "idle", "kernels", "temporal"))')
        fi
        if ((rss > hta_rss)); then hta_rss=$rss; fi
      fi
    fi
    for side in one all; do
      [[ -n ${g_err[$side]:-} ]] && continue
      threads=()
      [[ $side == one ]] && threads=(--threads 1)
      wait_gpuspy
      rc=0
      /usr/bin/time -f "%e %M" -o "$work/time" "$gpuspy" --json analyze "${threads[@]}" "${files[@]}" \
        >/dev/null 2>"$work/g.err" || rc=$?
      read -r wall rss < <(tail -1 "$work/time")
      if [[ $rc -ne 0 ]]; then
        g_err[$side]="gpuspy failed (exit $rc): $(tail -1 "$work/g.err" | cut -c1-120)"
        continue
      fi
      if [[ -z ${g_best[$side]:-} ]] || lt "$wall" "${g_best[$side]}"; then g_best[$side]=$wall; fi
      if ((rss > ${g_rss[$side]:-0})); then g_rss[$side]=$rss; fi
    done
  done
  for side in one all; do
    if [[ -n ${g_err[$side]:-} ]]; then g_best[$side]=${g_err[$side]} g_rss[$side]=""; fi
  done
  if [[ -n $hta_err ]]; then
    hta_best="HTA failed: $hta_err" hta_rss="" hta_phases=""
  fi
  N=$name MB=$(awk -v b="$bytes" 'BEGIN{printf "%.1f", b / 1e6}') H=$hta_best HR=$hta_rss G1=${g_best[one]} \
    GA=${g_best[all]} R1=${g_rss[one]} RA=${g_rss[all]} PH=$hta_phases awk '
    function num(x) { return x ~ /^[0-9.]+$/ }
    function s(x) { return num(x) ? sprintf("%.2f", x) : x }
    function mb(x) { return num(x) ? sprintf("%.0f", x / 1024) : "—" }
    function ratio(a, b) { return num(a) && num(b) && b > 0 ? sprintf("%.1fx", a / b) : "—" }
    BEGIN {
      e["N"]; e["MB"]; e["H"]; e["HR"]; e["G1"]; e["GA"]; e["R1"]; e["RA"]; e["PH"]
      for (k in e) { v[k] = ENVIRON[k]; gsub(/\|/, "/", v[k]) }
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s |\n", v["N"], v["MB"], s(v["H"]),
        mb(v["HR"]), s(v["G1"]), s(v["GA"]), ratio(v["H"], v["G1"]), ratio(v["H"], v["GA"]), mb(v["R1"]),
        mb(v["RA"]), ratio(v["HR"], v["R1"]), ratio(v["HR"], v["RA"]), v["PH"] == "" ? "—" : v["PH"]
    }'
  unset g_best g_rss g_err
done
