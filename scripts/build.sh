#!/usr/bin/env bash
# Configures and builds gpuspy. Usage: scripts/build.sh [build-dir] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
launcher=()
# Cache keys relative to the source tree, so a fresh clone elsewhere (CI) reuses what a developer
# built on the same machine.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} "${launcher[@]}" "$@" >/dev/null
ninja -C "$dir" -j"${JOBS:-$(nproc)}"
