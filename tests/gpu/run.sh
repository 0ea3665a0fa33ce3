#!/usr/bin/env bash
# GPU validation suite: real workloads on a real NVIDIA GPU, injected with libgpuspy.so, judged
# against tests/gpu/expected.json. See tests/gpu/README.md.
#
#   tests/gpu/run.sh [--bin-dir DIR] [suite.py options: --results-dir DIR --phases P --only W ...]
#
# Without a usable GPU (no nvidia-smi, no GPU listed, or PyTorch without CUDA) it prints
# "GPU suite skipped: <reason>" and exits 0. Otherwise it finds gpuspy's binaries (--bin-dir, else
# $GPUSPY_BIN_DIR, else tests/gpu/pack, else build/) - a CMake build dir or a tests/gpu/pack.sh
# output - and runs tests/gpu/suite.py, which writes tests/gpu/results/<date>.md and exits
# non-zero on a wrong verdict.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
python=${PYTHON:-python3}

skip() {
  echo "GPU suite skipped: $*"
  exit 0
}

bin_dir=${GPUSPY_BIN_DIR:-}
args=()
while (($#)); do
  case $1 in
    --bin-dir) bin_dir=${2:?--bin-dir needs a directory}; shift 2 ;;
    --bin-dir=*) bin_dir=${1#--bin-dir=}; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done

command -v nvidia-smi >/dev/null 2>&1 || skip "nvidia-smi not found (no NVIDIA driver)"
gpus=$(nvidia-smi -L 2>&1) || skip "nvidia-smi -L failed: ${gpus//$'\n'/ }"
grep -q '^GPU ' <<<"$gpus" || skip "nvidia-smi lists no GPU"
command -v "$python" >/dev/null 2>&1 || skip "$python not found"
torch_check=$("$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)' 2>&1)
case $? in
  0) ;;
  3) skip "PyTorch cannot use the GPU (torch.cuda.is_available() is False)" ;;
  *) skip "PyTorch is not importable by $python (${torch_check##*$'\n'})" ;;
esac

if [[ -z $bin_dir ]]; then
  for candidate in "$here/pack" "$repo/build"; do
    if [[ -f $candidate/bin/gpuspyd || -f $candidate/collector/server/gpuspyd ]]; then
      bin_dir=$candidate
      break
    fi
  done
fi
if [[ -z $bin_dir ]]; then
  echo "GPU suite: a GPU is here but no gpuspy binaries: pass --bin-dir (a build dir, or the" \
       "output of tests/gpu/pack.sh run where gpuspy was built)" >&2
  exit 2
fi

echo "GPU suite: $(head -1 <<<"$gpus"); binaries from $bin_dir"
exec "$python" "$here/suite.py" --bin-dir "$bin_dir" "${args[@]}"
