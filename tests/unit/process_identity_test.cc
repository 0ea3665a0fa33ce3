#include "inject/core/process_identity.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <map>

namespace gpuspy::inject {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars](const char* name) {
    auto it = vars.find(name);
    return it == vars.end() ? std::string() : it->second;
  };
}

TEST(ProcessIdentity, GpuspyJobWinsOverLauncherIds) {
  EXPECT_EQ(DetectJobId(FakeEnv({{"GPUSPY_JOB", "mine"}, {"SLURM_JOB_ID", "1234"}})), "mine");
  EXPECT_EQ(DetectJobId(FakeEnv({{"SLURM_JOB_ID", "1234"}, {"TORCHELASTIC_RUN_ID", "x"}})), "1234");
  EXPECT_EQ(DetectJobId(FakeEnv({{"TORCHELASTIC_RUN_ID", "run-7"}})), "run-7");
}

TEST(ProcessIdentity, KubernetesPodNameOnlyInsideKubernetes) {
  EXPECT_EQ(DetectJobId(FakeEnv({{"HOSTNAME", "trainer-0"}})), "");
  EXPECT_EQ(DetectJobId(FakeEnv({{"HOSTNAME", "trainer-0"}, {"KUBERNETES_SERVICE_HOST", "10.0.0.1"}})),
            "trainer-0");
}

TEST(ProcessIdentity, LauncherJobNameAndNodeRank) {
  JobInfo slurm = DetectJob(FakeEnv({{"SLURM_JOB_ID", "1234"}, {"SLURM_JOB_NAME", "pretrain"},
                                     {"SLURM_NODEID", "3"}}));
  EXPECT_EQ(slurm.id, "1234");
  EXPECT_EQ(slurm.launcher, "slurm");
  EXPECT_EQ(slurm.name, "pretrain");
  EXPECT_EQ(slurm.node_rank, 3);
  JobInfo elastic = DetectJob(FakeEnv({{"TORCHELASTIC_RUN_ID", "r1"}, {"GROUP_RANK", "1"}}));
  EXPECT_EQ(elastic.launcher, "torchelastic");
  EXPECT_EQ(elastic.node_rank, 1);
  JobInfo pod = DetectJob(FakeEnv({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"POD_NAME", "trainer-0"},
                                   {"POD_NAMESPACE", "ml"}}));
  EXPECT_EQ(pod.id, "trainer-0");
  EXPECT_EQ(pod.launcher, "kubernetes");
  EXPECT_EQ(pod.name, "ml/trainer-0");
  JobInfo mpi = DetectJob(FakeEnv({{"OMPI_MCA_orte_ess_jobid", "77"}}));
  EXPECT_EQ(mpi.id, "mpi-77");
  EXPECT_EQ(mpi.launcher, "mpi");
  EXPECT_EQ(mpi.node_rank, -1);
  JobInfo mine = DetectJob(FakeEnv({{"GPUSPY_JOB", "j"}, {"SLURM_JOB_ID", "1"}}));
  EXPECT_EQ(mine.launcher, "gpuspy");
  EXPECT_EQ(DetectJob(FakeEnv({})).launcher, "");
}

TEST(ProcessIdentity, RanksFromTorchrunSlurmAndMpi) {
  RankInfo t = DetectRank(FakeEnv({{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}}));
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.local_rank, 1);
  EXPECT_EQ(t.world_size, 8);
  RankInfo s = DetectRank(FakeEnv({{"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "2"}, {"SLURM_NTASKS", "16"}}));
  EXPECT_EQ(s.rank, 5);
  EXPECT_EQ(s.local_rank, 2);
  EXPECT_EQ(s.world_size, 16);
  RankInfo m = DetectRank(FakeEnv({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}}));
  EXPECT_EQ(m.rank, 0);
  EXPECT_EQ(m.world_size, 2);
  RankInfo none = DetectRank(FakeEnv({{"RANK", "not-a-number"}}));
  EXPECT_EQ(none.rank, -1);
  EXPECT_EQ(none.world_size, 0);
}

TEST(ProcessIdentity, IdentityNamesThisProcess) {
  v1::ProcessIdentity id = BuildIdentity(FakeEnv({{"GPUSPY_JOB", "j"}}), "inject");
  EXPECT_EQ(id.pid(), static_cast<uint32_t>(getpid()));
  EXPECT_EQ(id.job_id(), "j");
  EXPECT_EQ(id.source(), "inject");
  EXPECT_FALSE(id.host().empty());
  ASSERT_GT(id.command_line_size(), 0);
  EXPECT_NE(id.command_line(0).find("process_identity_test"), std::string::npos);
  // host:pid:start-ticks, so a reused pid is a different process.
  EXPECT_EQ(id.process_key().rfind(id.host() + ":" + std::to_string(getpid()) + ":", 0), 0u);
  EXPECT_GT(id.start_time_unix_ns(), 0);
}

}  // namespace
}  // namespace gpuspy::inject
