// Who this process is: host, pid, job, rank, command line. Read from the environment that
// launchers set (SLURM, torchrun/TorchElastic, OpenMPI/PMI, Kubernetes) or GPUSPY_JOB.
#pragma once

#include <string>

#include "gpuspy/v1/identity.pb.h"
#include "inject/core/env_lookup.h"

namespace gpuspy::inject {

// Job id, first match: GPUSPY_JOB, SLURM_JOB_ID, TORCHELASTIC_RUN_ID, the Kubernetes pod's owner
// (GPUSPY_K8S_JOB, else POD_NAME / HOSTNAME when KUBERNETES_SERVICE_HOST is set), OMPI job id.
// "" when none (the collector groups such processes per host).
std::string DetectJobId(const EnvLookup& env);

// The job as the launcher describes it.
struct JobInfo {
  std::string id;
  std::string launcher;  // see ProcessIdentity.launcher
  std::string name;
  int node_rank = -1;
};
JobInfo DetectJob(const EnvLookup& env);

struct RankInfo {
  int rank = -1;
  int local_rank = -1;
  int world_size = 0;
};
RankInfo DetectRank(const EnvLookup& env);

// Identity of the calling process (devices are added later, when CUPTI reports them).
v1::ProcessIdentity BuildIdentity(const EnvLookup& env, const std::string& source);

}  // namespace gpuspy::inject
