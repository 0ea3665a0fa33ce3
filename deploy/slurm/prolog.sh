#!/bin/bash
# SLURM Prolog (slurm.conf: Prolog=/opt/gpuspy/share/gpuspy/slurm/prolog.sh, or a file in a
# Prolog=/etc/slurm/prolog.d/* directory): runs as root on each node before a job starts. Makes
# sure the node daemon (gpuspyd.service) is running; jobs do not need it to start — without a
# collector they spill and replay — so this never fails: a non-zero prolog would drain the node.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
conf=${GPUSPY_SLURM_CONF:-/etc/gpuspy/slurm.env}
# shellcheck source=gpuspy-slurm.env
[[ -r "$conf" ]] && . "$conf"
service=${GPUSPY_SERVICE:-gpuspyd.service}
systemctl=${GPUSPY_SYSTEMCTL:-systemctl}

log() { logger -t gpuspy-prolog -- "$*" 2>/dev/null || echo "gpuspy-prolog: $*" >&2; }

if ! command -v "$systemctl" >/dev/null; then
  exit 0  # no systemd: the node daemon is managed some other way
fi
case "$("$systemctl" show --property=LoadState --value "$service" 2>/dev/null)" in
  loaded) ;;
  *) exit 0 ;;  # gpuspy is not installed on this node
esac
if ! "$systemctl" is-active --quiet "$service"; then
  log "$service is not running (job ${SLURM_JOB_ID:-?}); starting it"
  "$systemctl" start --no-block "$service" || log "could not start $service"
fi
exit 0
