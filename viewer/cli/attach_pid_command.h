// `gpuspy attach --pid N` / `gpuspy detach --pid N`: profile a process that was started without
// gpuspy. gpuspy's injection stub is loaded into it through ptrace (client/attach), its session
// registers with gpuspyd as a dormant process, and from there the capture is `gpuspy attach --job`'s.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "viewer/cli/attach_command.h"
#include "viewer/cli/commands.h"

namespace gpuspy::cli {

// Which running processes to attach to: pids, or the CUDA processes of this user (all users for
// root) whose command line matches `match`, or the processes of a cgroup (a SLURM job step's or a
// Kubernetes pod's: /sys/fs/cgroup/...).
struct ProcessSelector {
  std::vector<pid_t> pids;
  std::string match;
  std::string cgroup;
  bool empty() const { return pids.empty() && match.empty() && cgroup.empty(); }
};

int AttachToProcesses(const GlobalOptions& g, AttachOptions a, const ProcessSelector& which);
int DetachFromProcess(const GlobalOptions& g, pid_t pid);

}  // namespace gpuspy::cli
