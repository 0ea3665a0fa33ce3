#!/bin/bash
# SLURM Epilog (slurm.conf: Epilog=/opt/gpuspy/share/gpuspy/slurm/epilog.sh): runs as root on each
# node after a job. Removes the job's spill directory (task_prolog.sh points GPUSPY_SPILL_DIR
# there): batches a process could not deliver before it exited; nothing reads them afterwards.
# Never fails: a non-zero epilog would drain the node.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
conf=${GPUSPY_SLURM_CONF:-/etc/gpuspy/slurm.env}
# shellcheck source=gpuspy-slurm.env
[[ -r "$conf" ]] && . "$conf"

uid=${SLURM_JOB_UID:-}
gid=${SLURM_JOB_GID:-$uid}
job=${SLURM_JOB_ID:-}
[[ "$uid" =~ ^[0-9]+$ && "$gid" =~ ^[0-9]+$ && "$job" =~ ^[0-9]+(_[0-9]+)?$ ]] || exit 0
dir=${GPUSPY_SPILL_BASE:-/tmp}/gpuspy-$uid/spill/$job
[[ -d "$dir" ]] || exit 0
# As the job's user, not as root: the path is under the user's control (a symlink swapped in
# would otherwise point root's rm anywhere).
setpriv --reuid="$uid" --regid="$gid" --clear-groups -- rm -rf -- "$dir" 2>/dev/null ||
  logger -t gpuspy-epilog -- "could not remove $dir" 2>/dev/null || true
exit 0
