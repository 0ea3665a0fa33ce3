#!/usr/bin/env bash
# Makes an installed libgpuspy_core.so loadable inside job images that lack Debian 12's gRPC,
# protobuf and abseil (an NGC or pip PyTorch image has none of them):
#
#   deploy/docker/bundle-inject-deps.sh PREFIX/lib
#
# copies the core's shared-library closure into PREFIX/lib/gpuspy-deps/ and sets RUNPATHs so the
# core finds its dependencies there and each dependency finds its own next to itself. glibc's
# and the C++ runtime (libstdc++, libgcc_s) are left out: glibc is tied to the job's ld.so, and
# a PyTorch process has loaded its own libstdc++ before CUDA starts (same soname: ours would never
# be used, and Debian 12's needs glibc 2.36). So the job image needs a glibc and a libstdc++ at
# least as new as the symbol versions the bundle uses; the script prints both (for Debian 12:
# GLIBC_2.34 and GLIBCXX_3.4.29, i.e. Ubuntu 22.04, RHEL 9 or newer).
# The core is loaded RTLD_LOCAL and exports two symbols, so the bundled copies stay private to
# it; a library whose soname the process already loaded (libssl, libz) is shared instead.
# Needs ldd, objdump and patchelf.
set -euo pipefail
lib=${1:?usage: bundle-inject-deps.sh LIBDIR (the directory holding libgpuspy_core.so)}
core="$lib/libgpuspy_core.so"
deps="$lib/gpuspy-deps"
[[ -f "$core" ]] || { echo "bundle-inject-deps: no $core" >&2; exit 1; }
for tool in ldd objdump patchelf; do
  command -v "$tool" >/dev/null || { echo "bundle-inject-deps: $tool is required" >&2; exit 1; }
done

rm -rf "$deps"
mkdir -p "$deps"
n=0
while read -r soname path; do
  case "$soname" in
    ld-linux*|linux-vdso*|libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*|libutil.so.*)
      continue ;;
    libstdc++.so.*|libgcc_s.so.*)
      continue ;;
  esac
  cp -L "$path" "$deps/$soname"
  chmod 0644 "$deps/$soname"
  patchelf --set-rpath '$ORIGIN' "$deps/$soname"
  n=$((n + 1))
done < <(ldd "$core" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
patchelf --set-rpath '$ORIGIN/gpuspy-deps' "$core"

newest() { objdump -T "$core" "$deps"/* 2>/dev/null | grep -o "$1"'_[0-9][0-9.]*' | sort -uV | tail -1; }
echo "bundle-inject-deps: $n libraries in $deps; the job image needs $(newest GLIBC) and $(newest GLIBCXX) or newer"
