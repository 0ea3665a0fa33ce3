// Node collectors forwarding to a hub collector: every batch arrives once, across hub outages and
// restarts; a job whose ranks are on several nodes is one job at the hub; attach through the hub
// reaches the processes on the nodes.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using testing::Process;
using testing::RunResult;

using testing::Gpuspyd;

// Per process key: event and batch counts, as one collector reports them.
std::map<std::string, std::pair<uint64_t, uint64_t>> Counts(const std::string& address,
                                                            const std::string& job) {
  auto stub = v1::Query::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ListJobsResponse jobs;
  std::map<std::string, std::pair<uint64_t, uint64_t>> out;
  if (!stub->ListJobs(&ctx, {}, &jobs).ok()) return out;
  for (const auto& j : jobs.jobs()) {
    if (j.job_id() != job) continue;
    for (const auto& p : j.processes()) {
      out[p.identity().process_key()] = {p.event_count(), p.batch_count()};
    }
  }
  return out;
}

class HubE2E : public ::testing::Test {
 protected:
  // `port` 0 = any; `data` names the data dir (reused across restarts).
  std::unique_ptr<Gpuspyd> Start(const std::string& data, std::vector<std::string> extra,
                                 int port = 0) {
    auto d = std::make_unique<Gpuspyd>(testing::GpuspydOptions{
        .binary = GPUSPYD_BIN, .dir = dir_.path(), .name = data,
        .data_dir = dir_.path() + "/" + data, .port = port, .log_level = "info",
        .flags = std::move(extra)});
    EXPECT_TRUE(d->Start()) << d->log();
    return d;
  }
  std::unique_ptr<Gpuspyd> Node(const std::string& name, const std::string& hub) {
    return Start(name, {"--role", "node", "--forward-to", hub});
  }

  // `batch_ms` paces the producer (one batch of ~2 steps per interval) so that a kill lands
  // in the middle of its stream.
  RunResult Replay(const std::string& address, const std::string& job, int first_rank, int ranks,
                   int steps, double retry_for = 0, int batch_ms = 0) {
    return testing::Run({REPLAY_BIN, "--collector", address, "--job", job, "--ranks",
                         std::to_string(ranks), "--first-rank", std::to_string(first_rank),
                         "--steps", std::to_string(steps), "--scenario", "sync_stall",
                         "--batch-events", "512", "--retry-for", std::to_string(retry_for),
                         "--batch-ms", std::to_string(batch_ms)});
  }

  // Waits until the hub has, for every process of `job` on the nodes, the same events/batches.
  bool HubCaughtUp(const Gpuspyd& hub, const std::vector<const Gpuspyd*>& nodes,
                   const std::string& job, size_t processes) {
    for (int i = 0; i < 200; ++i) {
      std::map<std::string, std::pair<uint64_t, uint64_t>> want;
      for (const Gpuspyd* n : nodes) {
        for (const auto& [k, v] : Counts(n->address(), job)) want[k] = v;
      }
      if (want.size() == processes && Counts(hub.address(), job) == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  int StepCount(const Gpuspyd& d, const std::string& job) {
    auto stub = v1::Query::NewStub(grpc::CreateChannel(d.address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    v1::ListStepsRequest req;
    req.set_job_id(job);
    v1::ListStepsResponse resp;
    EXPECT_TRUE(stub->ListSteps(&ctx, req, &resp).ok());
    return resp.steps_size();
  }

  std::string Log(const std::string& data) { return testing::ReadFile(dir_.path() + "/" + data + ".log"); }

  testing::TempDir dir_;
};

TEST_F(HubE2E, RanksOnTwoNodesAreOneJobAtTheHubWithEveryBatchOnce) {
  auto hub = Start("hub", {"--role", "hub"});
  auto a = Node("node-a", hub->address());
  auto b = Node("node-b", hub->address());
  ASSERT_EQ(Replay(a->address(), "dist", 0, 2, 8).exit_code, 0);
  ASSERT_EQ(Replay(b->address(), "dist", 2, 2, 8).exit_code, 0);
  ASSERT_TRUE(HubCaughtUp(*hub, {a.get(), b.get()}, "dist", 4)) << Log("node-a") << Log("hub");

  // The hub analyses the whole job: the last step of each of the 4 ranks, the expected verdict.
  auto stub = v1::Query::NewStub(grpc::CreateChannel(hub->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  v1::GetStepReportRequest req;
  req.set_job_id("dist");
  req.set_last(1);
  v1::GetStepReportResponse resp;
  ASSERT_TRUE(stub->GetStepReport(&ctx, req, &resp).ok());
  ASSERT_EQ(resp.reports_size(), 4);
  for (const auto& rep : resp.reports()) EXPECT_EQ(rep.primary_bottleneck(), v1::sync_stall);
  // Finished processes are closed at the hub too.
  RunResult jobs = testing::Run({GPUSPY_BIN, "--collector", hub->address(), "jobs"});
  EXPECT_NE(jobs.out.find("finished"), std::string::npos) << jobs.out;
}

TEST_F(HubE2E, HubOutagesAndRestartsLoseNothingAndDuplicateNothing) {
  const int hub_port = testing::FreeTcpPort();
  const std::string hub_address = "127.0.0.1:" + std::to_string(hub_port);
  auto node = Node("node", hub_address);
  // The hub is not up yet: the node stores and keeps trying.
  ASSERT_EQ(Replay(node->address(), "early", 0, 2, 6).exit_code, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto hub = Start("hub", {"--role", "hub"}, hub_port);
  ASSERT_TRUE(HubCaughtUp(*hub, {node.get()}, "early", 2)) << Log("node");

  // Killed while a job streams, then back: the job arrives complete, each batch once.
  std::thread producer(
      [&] { EXPECT_EQ(Replay(node->address(), "during", 0, 2, 40, 0, 50).exit_code, 0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  hub->Stop(SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EXPECT_TRUE(hub->Start()) << Log("hub");
  producer.join();
  ASSERT_TRUE(HubCaughtUp(*hub, {node.get()}, "during", 2)) << Log("node");
  ASSERT_TRUE(HubCaughtUp(*hub, {node.get()}, "early", 2));

  auto stub = v1::Query::NewStub(grpc::CreateChannel(hub->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  v1::GetStatsResponse stats;
  ASSERT_TRUE(stub->GetStats(&ctx, {}, &stats).ok());
  EXPECT_EQ(stats.stats().batches_rejected(), 0u);
  EXPECT_EQ(stats.stats().sequence_gaps(), 0u);
}

TEST_F(HubE2E, ANodeRestartResumesWhereTheHubLeftOff) {
  auto hub = Start("hub", {"--role", "hub"});
  auto node = Node("node", hub->address());
  // The address is copied: `node` is reassigned below while the producer runs.
  std::thread producer([this, address = node->address()] {
    // The producer rides out the node's restart (as the injected library does with its spill).
    RunResult r = Replay(address, "nodekill", 0, 2, 40, /*retry_for=*/20, /*batch_ms=*/50);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  node->set_port(node->port());  // back on the port the producer knows
  node->Stop(SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(node->Start()) << Log("node");
  producer.join();
  ASSERT_TRUE(HubCaughtUp(*hub, {node.get()}, "nodekill", 2)) << Log("node");
  // Every one of the 40 steps of each rank is at the hub.
  EXPECT_EQ(StepCount(*hub, "nodekill"), 2 * 40);
}

TEST_F(HubE2E, AnOverloadedHubTurnsSomeProcessesAwayWhileTheOthersGoOn) {
  // Two stream slots at the hub for six live processes on the node.
  auto hub = Start("hub", {"--max-ingest-streams", "2"});
  auto node = Node("node", hub->address());
  const RunResult r = Replay(node->address(), "crowd", 0, 6, 60, 0, /*batch_ms=*/40);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(HubCaughtUp(*hub, {node.get()}, "crowd", 6)) << Log("node");
  v1::CollectorStats stats;
  {
    auto stub = v1::Query::NewStub(grpc::CreateChannel(node->address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    v1::GetStatsResponse resp;
    ASSERT_TRUE(stub->GetStats(&ctx, {}, &resp).ok());
    stats = resp.stats();
  }
  const v1::ForwardStats& f = stats.forward();
  EXPECT_EQ(f.hub(), hub->address());
  EXPECT_GT(f.hub_refusals(), 0u) << "the hub never ran out of slots: " << Log("hub");
  // Refusals are per process: the hub was never treated as unreachable.
  EXPECT_EQ(f.hub_unreachable(), 0u) << Log("node");
  EXPECT_GT(f.batches_forwarded(), 0u);
  EXPECT_NE(Log("node").find("is overloaded"), std::string::npos) << Log("node");
  // The CLI shows the node's forwarding with the rest of its counters.
  const RunResult cli = testing::Run({GPUSPY_BIN, "--collector", node->address(), "stats"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("forward.hub_refusals"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("forward.hub   "), std::string::npos) << cli.out;
}

TEST_F(HubE2E, BadRoleFlagsAreRefused) {
  RunResult r = testing::Run({GPUSPYD_BIN, "--role", "node", "--data-dir", dir_.path() + "/x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--role node needs --forward-to"), std::string::npos) << r.err;
  RunResult h = testing::Run({GPUSPYD_BIN, "--role", "hub", "--forward-to", "127.0.0.1:1",
                              "--data-dir", dir_.path() + "/y"});
  EXPECT_EQ(h.exit_code, 2);
}

#ifdef FAKE_TRAIN_BIN
TEST_F(HubE2E, AttachThroughTheHubReachesDormantProcessesOnTheNodes) {
  auto hub = Start("hub", {"--role", "hub"});
  auto node = Node("node", hub->address());
  std::vector<std::unique_ptr<Process>> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.push_back(std::make_unique<Process>(
        std::vector<std::string>{FAKE_TRAIN_BIN, "--steps", "100000", "--kernels", "8",
                                 "--sleep-us", "20000"},
        dir_.path() + "/rank" + std::to_string(r) + ".log",
        std::vector<std::string>{"LD_PRELOAD=" + std::string(SHIM_LIB),
                                 "GPUSPY_CUPTI_PATH=" + std::string(FAKE_CUPTI_LIB),
                                 "GPUSPY_COLLECTOR=" + node->address(), "GPUSPY_JOB=viahub",
                                 "GPUSPY_MODE=ondemand", "RANK=" + std::to_string(r),
                                 "GPUSPY_FLUSH_MS=20", "GPUSPY_SPILL_DIR=" + dir_.path() + "/spill"}));
  }
  // Both ranks show up at the hub as dormant.
  auto hub_query = v1::Query::NewStub(grpc::CreateChannel(hub->address(), grpc::InsecureChannelCredentials()));
  bool dormant = false;
  for (int i = 0; i < 100 && !dormant; ++i) {
    grpc::ClientContext ctx;
    v1::ListJobsResponse jobs;
    if (hub_query->ListJobs(&ctx, {}, &jobs).ok()) {
      int n = 0;
      for (const auto& j : jobs.jobs()) {
        for (const auto& p : j.processes()) n += j.job_id() == "viahub" && p.state() == "dormant";
      }
      dormant = n == 2;
    }
    if (!dormant) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(dormant) << Log("node") << Log("hub");

  RunResult r = testing::Run({GPUSPY_BIN, "--collector", hub->address(), "attach", "--job", "viahub",
                              "--steps", "3"},
                             {}, std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << Log("node");
  EXPECT_NE(r.out.find("2 processes of job viahub armed for 3 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PRIMARY BOTTLENECK"), std::string::npos) << r.out;
  // The captured steps are at the hub: 3 per rank.
  EXPECT_EQ(StepCount(*hub, "viahub"), 2 * 3);
}
#endif

}  // namespace
}  // namespace gpuspy
