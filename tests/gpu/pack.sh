#!/usr/bin/env bash
# Packs what the GPU suite needs from a gpuspy build into one directory that can travel to a
# machine without gpuspy's dependencies (the device machines have no gRPC/protobuf/abseil):
#
#   tests/gpu/pack.sh [BUILD_DIR [OUT_DIR]]      defaults: build  tests/gpu/pack
#
#   OUT_DIR/bin/   gpuspyd, gpuspy
#   OUT_DIR/lib/   libgpuspy.so, libgpuspy_inject.so, libgpuspy_core.so (side by side: the shim
#                  finds the stub, the stub the core, next to themselves)
#   OUT_DIR/deps/  every shared library those need (ldd), except the C runtime every Linux has
#                  (glibc's libraries, libstdc++, libgcc_s)
#
# Copies are stripped; the total must stay under 64 MiB (what the device tool carries). run.sh
# --bin-dir OUT_DIR puts deps/ on gpuspyd's LD_LIBRARY_PATH and, for injected workloads, only the
# libraries the machine lacks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:-$repo/build}
out=${2:-$here/pack}
limit_bytes=$((64 * 1024 * 1024))

files=("$build/collector/server/gpuspyd" "$build/viewer/cli/gpuspy" "$build/lib/libgpuspy.so"
       "$build/lib/libgpuspy_inject.so" "$build/lib/libgpuspy_core.so")
for f in "${files[@]}"; do
  [[ -f $f ]] || { echo "pack.sh: missing $f (build gpuspy first: scripts/build.sh)" >&2; exit 2; }
done

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/deps"
cp "$build/collector/server/gpuspyd" "$build/viewer/cli/gpuspy" "$out/bin/"
cp "$build/lib/libgpuspy.so" "$build/lib/libgpuspy_inject.so" "$build/lib/libgpuspy_core.so" "$out/lib/"

system_lib='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libutil\.so|libresolv\.so|libstdc\+\+\.so|libgcc_s\.so)'
for f in "${files[@]}"; do
  # "libfoo.so.1 => /usr/lib/.../libfoo.so.1 (0x...)"; a "not found" here is a broken build.
  if ldd "$f" | grep -q 'not found'; then
    echo "pack.sh: $f has unresolved libraries:" >&2; ldd "$f" | grep 'not found' >&2; exit 2
  fi
  ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r soname path; do
  [[ $soname =~ $system_lib ]] && continue
  cp -L "$path" "$out/deps/$soname"
done

if command -v strip >/dev/null; then
  strip --strip-unneeded "$out"/bin/* "$out"/lib/*.so "$out"/deps/* 2>/dev/null || true
fi

{
  echo "packed from: $build"
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
  echo "gpuspy commit: $(git -C "${src:-$repo}" rev-parse --short HEAD 2>/dev/null || echo '?') (${src:-$repo})"
  echo "packed on: $(uname -srm), $(ldd --version | head -1)"
  echo
  (cd "$out" && find . -type f | sort | xargs ls -l | awk '{print $5, $9}')
} > "$out/MANIFEST"

total=$(du -sb "$out" | cut -f1)
echo "pack.sh: $out: $(ls "$out/deps" | wc -l) libraries in deps/, $((total / 1024 / 1024)) MiB"
if (( total > limit_bytes )); then
  echo "pack.sh: $out is over 64 MiB: too big for the device tool's carry" >&2
  exit 1
fi
