#!/usr/bin/env bash
# README command 1 on a fresh Debian 12, timed: a debootstrap'ed minimal bookworm chroot (no
# packages beyond minbase, no compiler cache), the CUDA toolkit bind-mounted from the host at
# /usr/local/cuda (NVIDIA's, not a Debian package: a GPU machine has it), a clean clone of this
# repository; then `scripts/install-deps.sh && scripts/build.sh && scripts/demo.sh` with each
# part's wall time. Run as root on an otherwise idle machine (a loaded one inflates the build).
#   bench/first_run.sh [CHROOT_DIR]        default /tmp/gpuspy-first-run (removed first)
# Needs debootstrap (apt-get install debootstrap) and network access to a Debian mirror.
set -euo pipefail
root=${1:-/tmp/gpuspy-first-run}
repo=$(cd "$(dirname "$0")/.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
[[ $(id -u) == 0 ]] || { echo "first_run.sh: run as root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "first_run.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
[[ -d $cuda/include ]] || { echo "first_run.sh: no CUDA toolkit at $cuda (set CUDA_HOME)" >&2; exit 2; }

unmount() {
  for m in usr/local/cuda dev/pts dev sys proc; do umount "$root/$m" 2>/dev/null || true; done
}
unmount
rm -rf "$root"
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
trap unmount EXIT
# The host's apt sources (bookworm, -updates, -security), as a fresh install has them.
if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
  rm -f "$root/etc/apt/sources.list"
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
fi
cp /etc/resolv.conf "$root/etc/"
git clone -q "$repo" "$root/root/gpuspy"
mkdir -p "$root/usr/local/cuda"
mount --bind "$(readlink -f "$cuda")" "$root/usr/local/cuda"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount --bind /sys "$root/sys"

cat >"$root/root/first_run.sh" <<'EOF'
set -euo pipefail
cd /root/gpuspy
t0=$(date +%s.%N)
scripts/install-deps.sh
t1=$(date +%s.%N)
scripts/build.sh
t2=$(date +%s.%N)
scripts/demo.sh >/root/demo.out
t3=$(date +%s.%N)
grep -q "PRIMARY BOTTLENECK" /root/demo.out || { echo "the demo printed no report" >&2; exit 1; }
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v n="$(nproc)" 'BEGIN {
  printf "cores %d\ninstall-deps %.1f s\nbuild %.1f s\ndemo %.1f s\ntotal %.1f s\n", n, b-a, c-b, d-c, d-a }'
EOF
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  TERM=dumb bash -c 'time bash /root/first_run.sh'
