#!/usr/bin/env bash
# Configures and builds gpuspy.
#   scripts/build.sh [build-dir] [extra cmake args...]   Release, the product, in build/; the tests
#                                    and benchmarks only with -DGPUSPY_BUILD_TESTS=ON (what
#                                    scripts/test.sh passes), whatever is installed
#   VARIANT=asan scripts/build.sh    clang, ASan+UBSan and libFuzzer's coverage, -O1, in build-asan/:
#                                    the unit tests and the fuzz targets share this tree
#   VARIANT=tsan scripts/build.sh    GCC, ThreadSanitizer, -O3, in build-tsan/
#   TARGETS="a b" scripts/build.sh   only these ninja targets (and what they need), e.g. the
#                                    gpuspy_tests_<label> targets of tests/CMakeLists.txt
set -euo pipefail
cd "$(dirname "$0")/.."
case ${VARIANT:-release} in
  release) default_dir=build; variant_args=() ;;
  # Benchmarks are never run in the sanitizer trees: not configuring them saves CI minutes.
  asan) default_dir=build-asan; variant_args=(-DGPUSPY_FUZZ=ON -DGPUSPY_BUILD_BENCHMARKS=OFF)
        export CC=clang CXX=clang++ ;;
  tsan) default_dir=build-tsan; variant_args=(-DGPUSPY_TSAN=ON -DGPUSPY_BUILD_BENCHMARKS=OFF) ;;
  *) echo "build.sh: VARIANT must be release, asan or tsan, not '${VARIANT}'" >&2; exit 2 ;;
esac
dir=${1:-$default_dir}
shift || true
launcher=()
# Cache keys relative to the source tree, so a fresh clone elsewhere (CI) reuses what a developer
# built on the same machine.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# Files compiled with a precompiled header (cmake/GpuspyPch.cmake) are cached only with these.
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} "${launcher[@]}" \
  "${variant_args[@]}" "$@" >/dev/null
read -r -a targets <<< "${TARGETS:-}"
ninja -C "$dir" -j"${JOBS:-$(nproc)}" "${targets[@]}"
