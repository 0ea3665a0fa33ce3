#!/bin/bash
# SLURM Epilog (slurm.conf: Epilog=/opt/gpuspy/share/gpuspy/slurm/epilog.sh): runs as root on each
# node after a job. The job's spill directory (task_prolog.sh points GPUSPY_SPILL_DIR there) holds
# batches a process could not deliver before it exited (collector away or refusing at the time):
# first `gpuspy spill --deliver` sends them to the node daemon under each process's own identity,
# then the directory goes. What still could not be delivered is logged (syslog, gpuspy-epilog).
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
# would otherwise point root's commands anywhere), and the node daemon files the events under
# that user's ownership.
as_user=(setpriv --reuid="$uid" --regid="$gid" --clear-groups --)
gpuspy=${GPUSPY_PREFIX:-/opt/gpuspy}/bin/gpuspy
if [[ -x "$gpuspy" ]]; then
  if ! out=$(timeout 120 "${as_user[@]}" "$gpuspy" --collector "${GPUSPY_NODE_COLLECTOR:-127.0.0.1:7070}" \
      --timeout 10 spill --spill-dir "$dir" --deliver 2>&1); then
    logger -t gpuspy-epilog -- "job $job: spill not fully delivered: ${out//$'\n'/ }" 2>/dev/null || true
  fi
fi
"${as_user[@]}" rm -rf -- "$dir" 2>/dev/null ||
  logger -t gpuspy-epilog -- "could not remove $dir" 2>/dev/null || true
exit 0
