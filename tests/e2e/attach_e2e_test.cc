// `gpuspy attach` end to end: a real gpuspyd, "ranks" of a job running the fake CUDA training
// loop with gpuspy injected in dormant mode (GPUSPY_MODE=ondemand), and the real CLI.
#include <signal.h>

#include <map>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/all_events.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using testing::Process;
using testing::RunResult;

constexpr int kStepSleepUs = 20'000;  // each fake training step takes ~20 ms

class AttachE2E : public ::testing::Test {
 protected:
  void SetUp() override { StartDaemon(0); }

  // Starts gpuspyd on `port` (0 = any free one) over the test's data dir.
  void StartDaemon(int port) {
    daemon_.set_port(port);
    ASSERT_TRUE(daemon_.Start()) << daemon_.log();
    port_ = daemon_.port();
    channel_ = grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials());
    query_ = v1::Query::NewStub(channel_);
    control_ = v1::Control::NewStub(channel_);
  }

  std::string Address() const { return "127.0.0.1:" + std::to_string(port_); }

  // Starts one rank of `job` running `steps` training steps, injected and dormant.
  void StartRank(const std::string& job, int rank, int steps = 100'000,
                 const std::string& mode = "ondemand") {
    const std::string name = job + "-" + std::to_string(rank);
    ranks_[name] = std::make_unique<Process>(
        std::vector<std::string>{FAKE_TRAIN_BIN, "--steps", std::to_string(steps), "--kernels",
                                 "8", "--sleep-us", std::to_string(kStepSleepUs)},
        dir_.path() + "/" + name + ".log",
        std::vector<std::string>{"LD_PRELOAD=" + std::string(SHIM_LIB),
                                 "GPUSPY_CUPTI_PATH=" + std::string(FAKE_CUPTI_LIB),
                                 "GPUSPY_COLLECTOR=" + Address(), "GPUSPY_JOB=" + job,
                                 "GPUSPY_MODE=" + mode, "RANK=" + std::to_string(rank),
                                 "WORLD_SIZE=2", "GPUSPY_FLUSH_MS=20", "GPUSPY_HEARTBEAT_MS=100",
                                 "GPUSPY_SPILL_DIR=" + dir_.path() + "/spill", "GPUSPY_LOG=info"});
  }

  std::string RankLog(const std::string& job, int rank) {
    return testing::ReadFile(dir_.path() + "/" + job + "-" + std::to_string(rank) + ".log");
  }

  std::vector<v1::ProcessInfo> Processes(const std::string& job) {
    grpc::ClientContext ctx;
    v1::ListJobsResponse jobs;
    EXPECT_TRUE(query_->ListJobs(&ctx, {}, &jobs).ok());
    for (const auto& j : jobs.jobs()) {
      if (j.job_id() == job) return {j.processes().begin(), j.processes().end()};
    }
    return {};
  }

  // Waits until `n` processes of `job` are connected in `state`.
  bool WaitForState(const std::string& job, int n, const std::string& state) {
    for (int i = 0; i < 200; ++i) {
      int in_state = 0;
      for (const auto& p : Processes(job)) in_state += p.state() == state;
      if (in_state >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  v1::Capture GetCapture(const std::string& job) {
    grpc::ClientContext ctx;
    v1::GetCaptureRequest req;
    req.set_job_id(job);
    v1::GetCaptureResponse resp;
    EXPECT_TRUE(control_->GetCapture(&ctx, req, &resp).ok());
    return resp.capture();
  }

  bool WaitForCaptureEnd(const std::string& job, std::chrono::seconds limit = std::chrono::seconds(20)) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < give_up) {
      if (!GetCapture(job).active()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  RunResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), GPUSPY_BIN);
    args.push_back("--collector");
    args.push_back(Address());
    return testing::Run(args, {}, std::chrono::seconds(60));
  }

  std::vector<v1::Step> Steps(const std::string& job, uint64_t process_id) {
    grpc::ClientContext ctx;
    v1::ListStepsRequest req;
    req.set_job_id(job);
    req.set_process_id(process_id);
    v1::ListStepsResponse resp;
    EXPECT_TRUE(query_->ListSteps(&ctx, req, &resp).ok());
    return {resp.steps().begin(), resp.steps().end()};
  }

  // Steps once `want` of them have arrived, or what there is after `limit`: a rank that reports
  // dormant has sent its last batch, but the collector may still be storing it (under TSan the
  // fixed 300 ms wait this replaces saw 39 of 40 steps).
  std::vector<v1::Step> StepsWhenSettled(const std::string& job, uint64_t process_id, size_t want,
                                         std::chrono::seconds limit = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::vector<v1::Step> steps = Steps(job, process_id);
    while (steps.size() < want && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      steps = Steps(job, process_id);
    }
    return steps;
  }

  v1::ProcessEvents Events(const std::string& job, uint64_t process_id) {
    v1::GetEventsRequest req;
    req.set_job_id(job);
    req.set_process_id(process_id);
    req.set_limit(1'000'000);
    v1::GetEventsResponse resp;
    EXPECT_TRUE(gpuspy::testing::GetAllEvents(query_.get(), req, &resp).ok());
    return resp.processes().empty() ? v1::ProcessEvents() : resp.processes(0);
  }

  testing::TempDir dir_;
  testing::Gpuspyd daemon_{{.binary = GPUSPYD_BIN, .dir = dir_.path(), .log_level = "info"}};
  int port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Query::Stub> query_;
  std::unique_ptr<v1::Control::Stub> control_;
  std::map<std::string, std::unique_ptr<Process>> ranks_;
};

TEST_F(AttachE2E, CapturesExactlyNStepsPerRankAndNothingOutsideTheWindow) {
  StartRank("train", 0);
  StartRank("train", 1);
  ASSERT_TRUE(WaitForState("train", 2, "dormant")) << testing::ReadFile(dir_.path() + "/gpuspyd.log");
  // Dormant: registered, heartbeating, and not one event sent.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (const auto& p : Processes("train")) {
    EXPECT_EQ(p.event_count(), 0u) << "rank " << p.identity().rank();
    EXPECT_EQ(p.mode(), v1::CAPTURE_MODE_DORMANT);
    EXPECT_GT(p.last_heartbeat_unix_ns(), 0);
  }

  RunResult r = Cli({"attach", "--job", "train", "--steps", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << RankLog("train", 0);
  EXPECT_NE(r.out.find("2 processes of job train armed for 3 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 0 (pid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PRIMARY BOTTLENECK"), std::string::npos) << "the per-step report follows";

  const v1::Capture capture = GetCapture("train");
  ASSERT_EQ(capture.processes_size(), 2);
  for (const v1::CaptureProcess& cp : capture.processes()) {
    EXPECT_EQ(cp.status().state(), v1::CAPTURE_STATE_DONE) << cp.status().message();
    EXPECT_EQ(cp.status().steps_captured(), 3u);
    EXPECT_TRUE(cp.status().step_aligned());

    // Exactly 3 consecutive steps stored for this rank...
    const std::vector<v1::Step> steps = Steps("train", cp.process_id());
    ASSERT_EQ(steps.size(), 3u) << "rank " << cp.rank();
    EXPECT_EQ(steps[1].number(), steps[0].number() + 1);
    EXPECT_EQ(steps[2].number(), steps[1].number() + 1);
    EXPECT_EQ(steps[0].start_ns(), cp.status().window_start_ns());
    EXPECT_EQ(steps[2].end_ns(), cp.status().window_end_ns());

    // ...and no host event outside them; every kernel's launch is inside.
    const v1::ProcessEvents ev = Events("train", cp.process_id());
    std::map<uint64_t, int64_t> launch_time;
    int kernels = 0;
    for (const v1::Event& e : ev.events()) {
      if (e.has_api()) {
        launch_time[e.api().correlation_id()] = e.api().start_ns();
        EXPECT_GE(e.api().start_ns(), steps[0].start_ns());
        EXPECT_LT(e.api().start_ns(), steps[2].end_ns());
      }
      if (e.has_nvtx_range()) {
        EXPECT_GE(e.nvtx_range().start_ns(), steps[0].start_ns());
      }
    }
    for (const v1::Event& e : ev.events()) {
      if (!e.has_kernel()) continue;
      ++kernels;
      EXPECT_TRUE(launch_time.contains(e.kernel().correlation_id()))
          << "kernel " << e.kernel().name() << " launched outside the window";
    }
    // fake_train --kernels 8: 8 ATen/cuBLAS + 1 nvcc + 1 Triton + 3 graph kernels per step.
    EXPECT_EQ(kernels, 3 * 13) << "rank " << cp.rank();
  }

  // After the window: tracing is off again, nothing more arrives.
  std::map<uint64_t, uint64_t> counts;
  for (const auto& p : Processes("train")) counts[p.process_id()] = p.event_count();
  ASSERT_TRUE(WaitForState("train", 2, "dormant"));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (const auto& p : Processes("train")) {
    EXPECT_EQ(p.event_count(), counts[p.process_id()]) << "events after the window";
  }

  // `gpuspy jobs --processes` shows both ranks, dormant again, with a heartbeat.
  RunResult jobs = Cli({"jobs", "--job", "train"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_NE(jobs.out.find("dormant"), std::string::npos) << jobs.out;
  EXPECT_NE(jobs.out.find("ondemand"), std::string::npos) << jobs.out;
}

TEST_F(AttachE2E, DetachStopsEarlyAndKeepsWhatWasCaptured) {
  StartRank("long", 0);
  ASSERT_TRUE(WaitForState("long", 1, "dormant"));
  RunResult r = Cli({"attach", "--job", "long", "--steps", "10000", "--detach"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_TRUE(WaitForState("long", 1, "capturing"));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  RunResult d = Cli({"detach", "--job", "long"});
  ASSERT_EQ(d.exit_code, 0) << d.out << d.err;
  EXPECT_NE(d.out.find("1 process told to stop"), std::string::npos) << d.out;
  ASSERT_TRUE(WaitForCaptureEnd("long"));
  const v1::Capture c = GetCapture("long");
  ASSERT_EQ(c.processes_size(), 1);
  EXPECT_EQ(c.processes(0).status().state(), v1::CAPTURE_STATE_STOPPED);
  const uint32_t captured = c.processes(0).status().steps_captured();
  EXPECT_GT(captured, 0u);
  EXPECT_LT(captured, 10000u);
  EXPECT_EQ(Steps("long", c.processes(0).process_id()).size(), captured);

  RunResult again = Cli({"detach", "--job", "long"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("no capture is running on job 'long'"), std::string::npos) << again.err;
}

TEST_F(AttachE2E, ProcessExitingMidCaptureEndsItWithItsSteps) {
  StartRank("short", 0, /*steps=*/40);  // ~0.8 s of training, then exit
  ASSERT_TRUE(WaitForState("short", 1, "dormant"));
  RunResult r = Cli({"attach", "--job", "short", "--steps", "10000"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("the process is exiting"), std::string::npos) << r.out;
  const v1::Capture c = GetCapture("short");
  ASSERT_EQ(c.processes_size(), 1);
  EXPECT_FALSE(c.active());
  EXPECT_GT(c.processes(0).status().steps_captured(), 0u);
}

TEST_F(AttachE2E, ConcurrentJobsAndASecondAttachOnTheSameJob) {
  StartRank("a", 0);
  StartRank("b", 0);
  ASSERT_TRUE(WaitForState("a", 1, "dormant"));
  ASSERT_TRUE(WaitForState("b", 1, "dormant"));
  ASSERT_EQ(Cli({"attach", "--job", "a", "--steps", "4", "--detach"}).exit_code, 0);
  ASSERT_EQ(Cli({"attach", "--job", "b", "--steps", "2", "--detach"}).exit_code, 0);
  RunResult second = Cli({"attach", "--job", "a", "--steps", "4"});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("already running on job 'a'"), std::string::npos) << second.err;
  ASSERT_TRUE(WaitForCaptureEnd("a"));
  ASSERT_TRUE(WaitForCaptureEnd("b"));
  EXPECT_EQ(GetCapture("a").processes(0).status().steps_captured(), 4u);
  EXPECT_EQ(GetCapture("b").processes(0).status().steps_captured(), 2u);
  EXPECT_EQ(Steps("a", GetCapture("a").processes(0).process_id()).size(), 4u);
  EXPECT_EQ(Steps("b", GetCapture("b").processes(0).process_id()).size(), 2u);
  // Once finished, the job can be attached again.
  EXPECT_EQ(Cli({"attach", "--job", "a", "--steps", "1"}).exit_code, 0);
}

TEST_F(AttachE2E, ARankStartingDuringTheCaptureJoinsIt) {
  StartRank("grow", 0);
  ASSERT_TRUE(WaitForState("grow", 1, "dormant"));
  ASSERT_EQ(Cli({"attach", "--job", "grow", "--steps", "30", "--detach"}).exit_code, 0);
  StartRank("grow", 1);
  ASSERT_TRUE(WaitForCaptureEnd("grow"));
  const v1::Capture c = GetCapture("grow");
  ASSERT_EQ(c.processes_size(), 2) << "the late rank joined";
  for (const auto& p : c.processes()) {
    EXPECT_EQ(p.status().state(), v1::CAPTURE_STATE_DONE) << "rank " << p.rank();
    EXPECT_EQ(p.status().steps_captured(), 30u);
  }
}

TEST_F(AttachE2E, CollectorRestartMidCaptureLosesNoStepOfTheWindow) {
  StartRank("restart", 0);
  ASSERT_TRUE(WaitForState("restart", 1, "dormant"));
  ASSERT_EQ(Cli({"attach", "--job", "restart", "--steps", "40", "--detach"}).exit_code, 0);
  ASSERT_TRUE(WaitForState("restart", 1, "capturing"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const int port = port_;
  daemon_.Stop(SIGKILL);
  // The process keeps its window going on its own (spilling), whatever the collector does.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  StartDaemon(port);
  // It reconnects, replays the spill, finishes its 40 steps and goes dormant again.
  ASSERT_TRUE(WaitForState("restart", 1, "dormant")) << RankLog("restart", 0);
  const std::vector<v1::ProcessInfo> p = Processes("restart");
  ASSERT_EQ(p.size(), 1u);
  const std::vector<v1::Step> steps = StepsWhenSettled("restart", p[0].process_id(), 40);
  ASSERT_EQ(steps.size(), 40u) << RankLog("restart", 0);
  for (size_t i = 1; i < steps.size(); ++i) EXPECT_EQ(steps[i].number(), steps[i - 1].number() + 1);
  EXPECT_EQ(p[0].loss().spill_dropped_events(), 0u);
  // The new collector never saw the attach: `gpuspy attach` polling it would say so clearly.
  grpc::ClientContext ctx;
  v1::GetCaptureRequest req;
  req.set_job_id("restart");
  v1::GetCaptureResponse resp;
  EXPECT_EQ(control_->GetCapture(&ctx, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(AttachE2E, ClearAnswersForJobsThatCannotBeAttached) {
  RunResult unknown = Cli({"attach", "--job", "nosuch", "--steps", "3"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no job 'nosuch'"), std::string::npos) << unknown.err;

  StartRank("solo", 0);
  ASSERT_TRUE(WaitForState("solo", 1, "dormant"));
  RunResult rank = Cli({"attach", "--job", "solo", "--rank", "7", "--steps", "3"});
  EXPECT_EQ(rank.exit_code, 1);
  EXPECT_NE(rank.err.find("no live process of job 'solo' rank 7"), std::string::npos) << rank.err;

  RunResult usage = Cli({"attach", "--job", "solo"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("--steps N or --duration D"), std::string::npos) << usage.err;

  StartRank("always", 0, 100'000, "always");
  ASSERT_TRUE(WaitForState("always", 1, "capturing"));
  RunResult continuous = Cli({"attach", "--job", "always", "--steps", "3"});
  EXPECT_EQ(continuous.exit_code, 1);
  EXPECT_NE(continuous.err.find("trace continuously"), std::string::npos) << continuous.err;

  ranks_["solo-0"]->Stop(SIGKILL);
  for (int i = 0; i < 100 && !Processes("solo").empty() && Processes("solo")[0].state() != "disconnected"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  RunResult gone = Cli({"attach", "--job", "solo", "--steps", "3"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("has no live process"), std::string::npos) << gone.err;
}

}  // namespace
}  // namespace gpuspy
