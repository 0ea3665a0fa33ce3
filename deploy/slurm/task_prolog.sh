#!/bin/bash
# SLURM TaskProlog (slurm.conf: TaskProlog=/opt/gpuspy/share/gpuspy/slurm/task_prolog.sh): runs as
# the job's user before each task, with the task's environment; the `export NAME=value` lines it
# prints are set in the task's environment.
#
# Jobs opt in with GPUSPY in their environment:
#   GPUSPY=1 sbatch train.sh           (or `export GPUSPY=1` in the script, before srun)
#   GPUSPY=always srun python train.py
# 1 / ondemand: dormant until `gpuspy attach --job $SLURM_JOB_ID`; always: traced from the start.
# Anything the job set itself (GPUSPY_MODE, GPUSPY_JOB, GPUSPY_COLLECTOR, GPUSPY_SPILL_DIR) is
# kept. Without GPUSPY this prints nothing and the task runs untouched.
conf=${GPUSPY_SLURM_CONF:-/etc/gpuspy/slurm.env}
# shellcheck source=gpuspy-slurm.env
[[ -r "$conf" ]] && . "$conf"

case "${GPUSPY:-}" in
  "" | 0 | no | off | false) exit 0 ;;
  1 | yes | on | true | ondemand) mode=${GPUSPY_DEFAULT_MODE:-ondemand} ;;
  always) mode=always ;;
  *)
    if [[ "${SLURM_PROCID:-0}" == 0 ]]; then
      echo "print gpuspy: GPUSPY=${GPUSPY} is not 1, ondemand or always: not profiling"
    fi
    exit 0 ;;
esac

lib=${GPUSPY_PREFIX:-/opt/gpuspy}/lib/libgpuspy.so
if [[ ! -r "$lib" ]]; then
  if [[ "${SLURM_PROCID:-0}" == 0 ]]; then
    echo "print gpuspy: $lib is not installed on $(hostname): not profiling"
  fi
  exit 0
fi

# Ours first; what the job preloads already stays (colon-separated, as ld.so accepts).
case ":${LD_PRELOAD:-}:" in
  *":$lib:"*) preload=$LD_PRELOAD ;;
  *) preload=$lib${LD_PRELOAD:+:$LD_PRELOAD} ;;
esac
echo "export LD_PRELOAD=$preload"
[[ -n "${GPUSPY_JOB:-}" ]] || echo "export GPUSPY_JOB=${SLURM_JOB_ID:-}"
[[ -n "${GPUSPY_MODE:-}" ]] || echo "export GPUSPY_MODE=$mode"
[[ -n "${GPUSPY_COLLECTOR:-}" ]] || echo "export GPUSPY_COLLECTOR=${GPUSPY_NODE_COLLECTOR:-127.0.0.1:7070}"
# Per job, so the epilog can remove what a process could not deliver before it exited.
if [[ -z "${GPUSPY_SPILL_DIR:-}" && -n "${SLURM_JOB_ID:-}" ]]; then
  echo "export GPUSPY_SPILL_DIR=${GPUSPY_SPILL_BASE:-/tmp}/gpuspy-$(id -u)/spill/${SLURM_JOB_ID}"
fi
exit 0
