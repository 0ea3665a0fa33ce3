#!/bin/sh
# Publishes the injection library to a directory that jobs load it from (a hostPath on every GPU
# node; the DaemonSet's init container runs this on each start):
#
#   install-inject-lib.sh [SRC] DEST      SRC defaults to /opt/gpuspy/lib
#
# Afterwards DEST/lib is a symlink to a fresh DEST/.lib-<id> holding libgpuspy.so,
# libgpuspy_inject.so, libgpuspy_core.so and gpuspy-deps/. Files are never rewritten in place:
# running jobs have the old ones mapped, and truncating a mapped library kills them (SIGBUS).
# The symlink is swapped atomically and old copies are unlinked, which running processes
# survive (the inode lives as long as it is mapped).
set -eu
if [ $# -eq 1 ]; then src=/opt/gpuspy/lib; dest=$1; else src=${1:?}; dest=${2:?}; fi
for f in libgpuspy.so libgpuspy_inject.so libgpuspy_core.so; do
  [ -f "$src/$f" ] || { echo "install-inject-lib: $src/$f is missing" >&2; exit 1; }
done
mkdir -p "$dest"
id=$(date +%Y%m%d%H%M%S)-$$
new="$dest/.lib-$id"
cp -R "$src" "$new.tmp"
chmod -R a+rX "$new.tmp"
mv "$new.tmp" "$new"
ln -sfn ".lib-$id" "$dest/lib.tmp-$$"
mv -T "$dest/lib.tmp-$$" "$dest/lib"
for old in "$dest"/.lib-*; do
  [ "$old" = "$new" ] || rm -rf "$old"
done
echo "install-inject-lib: $dest/lib -> .lib-$id"
