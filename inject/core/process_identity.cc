#include "inject/core/process_identity.h"

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpuspy::inject {
namespace {

int FirstInt(const EnvLookup& env, std::initializer_list<const char*> names, int fallback) {
  for (const char* n : names) {
    int v = 0;
    const std::string s = env(n);
    if (!s.empty() && absl::SimpleAtoi(s, &v)) return v;
  }
  return fallback;
}

std::vector<std::string> CommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string cur;
  for (char c : all) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) args.push_back(cur);
  return args;
}

// Seconds since boot when the process started (field 22 of /proc/self/stat, in clock ticks):
// together with host and pid it names this process uniquely even after pid reuse.
std::string StartTicks() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return "0";
  int field = 2;
  size_t pos = paren + 1;
  while (pos < stat.size() && field < 22) {
    if (stat[pos] == ' ') ++field;
    ++pos;
  }
  const size_t end = stat.find(' ', pos);
  return stat.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

}  // namespace

std::string DetectJobId(const EnvLookup& env) { return DetectJob(env).id; }

JobInfo DetectJob(const EnvLookup& env) {
  JobInfo job;
  const bool k8s = !env("KUBERNETES_SERVICE_HOST").empty();
  const struct {
    const char* var;
    const char* launcher;
  } kIds[] = {{"GPUSPY_JOB", "gpuspy"},
              {"SLURM_JOB_ID", "slurm"},
              {"TORCHELASTIC_RUN_ID", "torchelastic"},
              {"GPUSPY_K8S_JOB", "kubernetes"}};
  for (const auto& k : kIds) {
    if (std::string v = env(k.var); !v.empty()) {
      job.id = v;
      job.launcher = k.launcher;
      break;
    }
  }
  if (job.id.empty() && k8s) {
    for (const char* n : {"POD_NAME", "HOSTNAME"}) {
      if (std::string v = env(n); !v.empty()) {
        job.id = v;
        job.launcher = "kubernetes";
        break;
      }
    }
  }
  if (job.id.empty()) {
    if (std::string ompi = env("OMPI_MCA_orte_ess_jobid"); !ompi.empty()) {
      job.id = "mpi-" + ompi;
      job.launcher = "mpi";
    }
  }
  if (std::string name = env("SLURM_JOB_NAME"); !name.empty()) {
    job.name = name;
  } else if (k8s && !env("POD_NAME").empty()) {
    const std::string ns = env("POD_NAMESPACE");
    job.name = ns.empty() ? env("POD_NAME") : ns + "/" + env("POD_NAME");
  }
  job.node_rank = FirstInt(env, {"SLURM_NODEID", "GROUP_RANK", "NODE_RANK"}, -1);
  return job;
}

RankInfo DetectRank(const EnvLookup& env) {
  RankInfo r;
  r.rank = FirstInt(env, {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"}, -1);
  r.local_rank =
      FirstInt(env, {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"}, -1);
  r.world_size =
      FirstInt(env, {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}, 0);
  return r;
}

v1::ProcessIdentity BuildIdentity(const EnvLookup& env, const std::string& source) {
  v1::ProcessIdentity id;
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  id.set_host(host);
  id.set_pid(static_cast<uint32_t>(getpid()));
  id.set_uid(getuid());
  id.set_process_key(absl::StrCat(host, ":", getpid(), ":", StartTicks()));
  const JobInfo job = DetectJob(env);
  id.set_job_id(job.id);
  id.set_launcher(job.launcher);
  id.set_job_name(job.name);
  id.set_node_rank(job.node_rank);
  const RankInfo r = DetectRank(env);
  id.set_rank(r.rank);
  id.set_local_rank(r.local_rank);
  id.set_world_size(r.world_size);
  for (std::string& a : CommandLine()) id.add_command_line(std::move(a));
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  id.set_start_time_unix_ns(static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec);
  id.set_source(source);
  id.set_client_version("gpuspy-inject 0.1.0");
  return id;
}

}  // namespace gpuspy::inject
