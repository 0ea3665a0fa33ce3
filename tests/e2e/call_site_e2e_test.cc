// Call sites, live: `python3 callsite_train.py` drives the fake CUDA through ctypes with the
// injection on (LD_PRELOAD=libgpuspy.so, as `gpuspy run` does), and the collector's API events and
// report name the script's exact file:line pairs with the right counts.
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>

#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/all_events.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using testing::Process;
using testing::RunResult;

constexpr int kSteps = 6;

class CallSiteE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start()) << daemon_.log();
    port_ = daemon_.port();
  }
  std::string Address() const { return "127.0.0.1:" + std::to_string(port_); }

  RunResult Train(const std::string& job, const std::vector<std::string>& extra_env,
                  const std::string& script = "callsite_train.py", int steps = kSteps) {
    std::vector<std::string> env = {"LD_PRELOAD=" + std::string(SHIM_LIB),
                                    "GPUSPY_CUPTI_PATH=" + std::string(FAKE_CUPTI_LIB),
                                    "GPUSPY_COLLECTOR=" + Address(), "GPUSPY_JOB=" + job,
                                    "GPUSPY_FLUSH_MS=20", "GPUSPY_SPILL_DIR=" + dir_.path() + "/spill",
                                    "GPUSPY_LOG=info"};
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    // Run from the script's directory: sites are shown relative to the working directory.
    return testing::Run({"/bin/sh", "-c",
                         "cd '" + std::string(SOURCE_DIR) + "/tests/e2e' && exec " + PYTHON3 +
                             " " + script + " '" + FAKE_CUPTI_LIB + "' " + std::to_string(steps)},
                        env);
  }

  // (API name without its _vNNNN suffix, call site) -> count, over the job's stored API events.
  std::map<std::pair<std::string, std::string>, int> SitesByApi(const std::string& job) {
    auto stub = v1::Query::NewStub(grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials()));
    v1::GetEventsRequest req;
    req.set_job_id(job);
    req.set_limit(1'000'000);
    v1::GetEventsResponse resp;
    EXPECT_TRUE(gpuspy::testing::GetAllEvents(stub.get(), req, &resp).ok());
    std::map<std::pair<std::string, std::string>, int> out;
    for (const auto& p : resp.processes()) {
      for (const auto& e : p.events()) {
        if (!e.has_api()) continue;
        std::string name = e.api().name();
        if (const size_t v = name.rfind("_v"); v != std::string::npos) name.resize(v);
        out[{name, e.api().call_site()}]++;
      }
    }
    return out;
  }

  testing::TempDir dir_;
  testing::Gpuspyd daemon_{{.binary = GPUSPYD_BIN, .dir = dir_.path()}};
  int port_ = 0;
};

TEST_F(CallSiteE2E, BlockingCallsAndSampledLaunchesNameTheScriptsLines) {
  // Exact counts: no gap-ender captures (a loaded machine may pause between any two launches).
  // No host samples either: their lines would be sites too.
  RunResult r = Train("sites", {"GPUSPY_CALLSITE_LAUNCHES=4", "GPUSPY_CALLSITE_GAP_US=0",
                                "GPUSPY_HOST_SAMPLE_HZ=0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto got = SitesByApi("sites");
  std::map<std::pair<std::string, std::string>, int> want = {
      // Each site with its caller (GPUSPY_CALLSITE_CALLERS=1, the default).
      {{"cudaStreamSynchronize", "callsite_train.py:33 loss_item \u2190 callsite_train.py:45 train"}, kSteps},
      {{"cudaMemcpy", "callsite_train.py:46 train \u2190 callsite_train.py:53 <module>"}, kSteps},
      // Through the stand-in torch module: its frame is walked past to the user's line.
      {{"cudaDeviceSynchronize", "callsite_train.py:49 train \u2190 callsite_train.py:53 <module>"},
       kSteps / 2},
      // 1 in 4 launches: the first, then every 4th.
      {{"cudaLaunchKernel", "callsite_train.py:38 forward \u2190 callsite_train.py:44 train"},
       (kSteps * 10 + 3) / 4},
      {{"cudaLaunchKernel", ""}, kSteps * 10 - (kSteps * 10 + 3) / 4},
  };
  for (const auto& [key, n] : got) {
    if (key.first.find("Launch") == std::string::npos &&
        key.first.find("ynchronize") == std::string::npos && key.first.find("Memcpy") == std::string::npos) {
      continue;  // init, NVTX and the like: no call site expected, none checked
    }
    EXPECT_TRUE(want.contains(key)) << key.first << " at '" << key.second << "' x" << n;
  }
  for (const auto& [key, n] : want) {
    auto it = got.find(key);
    EXPECT_EQ(it == got.end() ? 0 : it->second, n) << key.first << " at '" << key.second << "'";
  }
  EXPECT_NE(r.err.find("call sites: 4 distinct"), std::string::npos) << r.err;

  // The report's sync-stall evidence names the line that synchronizes every step.
  RunResult report = testing::Run(
      {GPUSPY_BIN, "--collector", Address(), "--json", "report", "--job", "sites", "--all"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("callsite_train.py:33 loss_item \u2190 callsite_train.py:45 train x1"),
            std::string::npos)
      << report.out;
}

TEST_F(CallSiteE2E, CallersZeroNamesTheLineAlone) {
  RunResult r = Train("solo", {"GPUSPY_CALLSITE_CALLERS=0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto got = SitesByApi("solo");
  const auto it = got.find({"cudaStreamSynchronize", "callsite_train.py:33 loss_item"});
  ASSERT_NE(it, got.end());
  EXPECT_EQ(it->second, kSteps);
}

TEST_F(CallSiteE2E, TheLaunchAfterTheHostsSleepIsNamedWithoutSampling) {
  // Sampling takes each thread's first launch only; after the 2 ms of host work the next step's
  // first launch ends a gap. After odd steps the torch.cuda.synchronize() stand-in opens the
  // last CUDA call before it: steps 1, 3 and 5 start after the sleep alone (more only if the
  // machine pauses the script for a millisecond mid-loop).
  RunResult r = Train("gaps", {"GPUSPY_CALLSITE_LAUNCHES=1000000", "GPUSPY_CALLSITE_GAP_US=1000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto got = SitesByApi("gaps");
  const auto it = got.find({"cudaLaunchKernel", "callsite_train.py:38 forward \u2190 callsite_train.py:44 train"});
  ASSERT_NE(it, got.end());
  EXPECT_GE(it->second, 1 + kSteps / 2);  // the first launch, and one per step after a sleep
  EXPECT_NE(r.err.find("after host gaps"), std::string::npos) << r.err;
}

// The host sampler: in a step where the GPU waits ~8 ms for Python computing metrics, the
// host_bound finding names the line the host spent those gaps on, from samples alone (no host
// ranges are recorded), and the samples are stored as host_sample marks on the main thread.
TEST_F(CallSiteE2E, TheHostSamplerNamesTheLineTheGpuWaitedFor) {
  constexpr int kHostSteps = 12;
  RunResult r = Train("sampled", {"GPUSPY_HOST_SAMPLE_HZ=1000"}, "host_sample_train.py", kHostSteps);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("host samples: "), std::string::npos) << r.err;

  auto stub = v1::Query::NewStub(grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials()));
  v1::GetEventsRequest req;
  req.set_job_id("sampled");
  req.set_limit(1'000'000);
  v1::GetEventsResponse resp;
  ASSERT_TRUE(gpuspy::testing::GetAllEvents(stub.get(), req, &resp).ok());
  std::map<std::string, int> samples;
  std::set<uint32_t> sampled_threads, launching_threads;
  for (const auto& p : resp.processes()) {
    for (const auto& e : p.events()) {
      if (e.has_api() && e.api().name().find("Launch") != std::string::npos) {
        launching_threads.insert(e.api().thread_id());
      }
      if (!e.has_nvtx_mark() || e.nvtx_mark().domain() != "host_sample") continue;
      sampled_threads.insert(e.nvtx_mark().thread_id());
      samples[e.nvtx_mark().message()]++;
    }
  }
  EXPECT_EQ(sampled_threads, launching_threads);  // the one thread, on its own lane
  const std::string metrics = "host_sample_train.py:26 compute_metrics \u2190 host_sample_train.py:34 train";
  // ~8 ms of metrics a step at 1 kHz: ~8 samples a step, ~96 in all; a loaded machine takes fewer.
  EXPECT_GE(samples[metrics], kHostSteps) << r.err;

  RunResult report = testing::Run(
      {GPUSPY_BIN, "--collector", Address(), "--json", "report", "--job", "sampled", "--all"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const nlohmann::json j = nlohmann::json::parse(report.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << report.out;
  int host_bound = 0, named = 0;
  for (const auto& step : j["reports"]) {
    for (const auto& f : step["findings"]) {
      if (f["detector"] != "host_bound") continue;
      ++host_bound;
      for (const auto& e : f["evidence"]) {
        if (e["key"] == "hot_line" && e.value("call_site", "") == metrics) ++named;
      }
    }
  }
  // The first step is the warm-up; the rest wait for the host (8 of ~11 ms).
  EXPECT_GE(host_bound, kHostSteps / 2) << report.out;
  EXPECT_GE(named, kHostSteps / 2) << report.out;
}

TEST_F(CallSiteE2E, SwitchedOffMeansNoCallSites) {
  RunResult r = Train("nosites", {"GPUSPY_CALLSITES=0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int with_site = 0, apis = 0;
  for (const auto& [key, n] : SitesByApi("nosites")) {
    apis += n;
    if (!key.second.empty()) with_site += n;
  }
  EXPECT_GT(apis, kSteps * 10);
  EXPECT_EQ(with_site, 0);
}

}  // namespace
}  // namespace gpuspy
