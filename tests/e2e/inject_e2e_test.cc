// The real injection path without a GPU: LD_PRELOAD=libgpuspy.so on a program that drives the
// fake CUDA/CUPTI (tests/fake_cuda), a real gpuspyd, and queries of what arrived.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <fstream>
#include <map>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/all_events.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using testing::Process;
using testing::RunResult;

struct KindCounts {
  std::map<std::string, int> by_kind;  // "kernel", "runtime_api", ...
  std::vector<std::string> kernel_names;
  bool launches_correlate = true;
  int graph_kernels = 0;
  int processes = 0;
  v1::ProcessIdentity identity;
};

class InjectE2E : public ::testing::Test {
 protected:
  void StartDaemon(int port = 0) {
    daemon_.set_port(port);
    ASSERT_TRUE(daemon_.Start()) << daemon_.log();
    port_ = daemon_.port();
  }
  std::string Address() const { return "127.0.0.1:" + std::to_string(port_); }

  // Environment that injects gpuspy the way `gpuspy run` does, with the fake CUPTI.
  std::vector<std::string> Env(const std::string& job, const std::string& collector = "") {
    return {"LD_PRELOAD=" + std::string(SHIM_LIB),
            "GPUSPY_CUPTI_PATH=" + std::string(FAKE_CUPTI_LIB),
            "GPUSPY_COLLECTOR=" + (collector.empty() ? Address() : collector),
            "GPUSPY_JOB=" + job,
            "GPUSPY_FLUSH_MS=20",
            "GPUSPY_SPILL_DIR=" + dir_.path() + "/spill",
            "GPUSPY_LOG=info"};
  }

  nlohmann::json Expect(const std::string& path) {
    return nlohmann::json::parse(testing::ReadFile(path));
  }

  KindCounts Collected(const std::string& job) {
    auto stub = v1::Query::NewStub(grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials()));
    KindCounts out;
    {
      grpc::ClientContext ctx;
      v1::ListJobsResponse jobs;
      EXPECT_TRUE(stub->ListJobs(&ctx, {}, &jobs).ok());
      for (const auto& j : jobs.jobs()) {
        if (j.job_id() != job) continue;
        out.processes = j.processes_size();
        if (!j.processes().empty()) out.identity = j.processes(0).identity();
      }
    }
    if (out.processes == 0) return out;
    v1::GetEventsRequest req;
    req.set_job_id(job);
    req.set_limit(1'000'000);
    v1::GetEventsResponse resp;
    EXPECT_TRUE(gpuspy::testing::GetAllEvents(stub.get(), req, &resp).ok());
    for (const auto& p : resp.processes()) {
      std::map<uint64_t, std::string> api_by_corr;
      for (const auto& e : p.events()) {
        if (e.has_api()) api_by_corr[e.api().correlation_id()] = e.api().name();
      }
      for (const auto& e : p.events()) {
        switch (e.kind_case()) {
          case v1::Event::kKernel: {
            out.by_kind["kernels"]++;
            out.kernel_names.push_back(e.kernel().name());
            out.graph_kernels += e.kernel().graph_id() != 0;
            auto it = api_by_corr.find(e.kernel().correlation_id());
            if (it == api_by_corr.end() ||
                (it->second.find("aunch") == std::string::npos)) {
              out.launches_correlate = false;
            }
            break;
          }
          case v1::Event::kApi:
            out.by_kind[e.api().domain() == v1::API_DOMAIN_DRIVER ? "driver_api" : "runtime_api"]++;
            break;
          case v1::Event::kMemcpy: out.by_kind["memcpy"]++; break;
          case v1::Event::kMemset: out.by_kind["memset"]++; break;
          case v1::Event::kSync: out.by_kind["sync"]++; break;
          case v1::Event::kMemory:
            out.by_kind[e.memory().op() == v1::MEMORY_OP_ALLOC ? "alloc" : "free"]++;
            break;
          case v1::Event::kNvtxRange: out.by_kind["nvtx_ranges"]++; break;
          case v1::Event::kNvtxMark: out.by_kind["nvtx_marks"]++; break;
          case v1::Event::kExternalCorrelation: out.by_kind["external_correlations"]++; break;
          case v1::Event::kMemoryPool: out.by_kind["memory_pools"]++; break;
          case v1::Event::kGraphLaunch: out.by_kind["graph_launches"]++; break;
          default: break;
        }
      }
    }
    return out;
  }

  void ExpectExactly(const nlohmann::json& expect, const KindCounts& got) {
    for (const char* kind : {"kernels", "runtime_api", "driver_api", "memcpy", "memset", "sync",
                             "alloc", "free", "nvtx_ranges", "nvtx_marks",
                             "external_correlations", "memory_pools"}) {
      const int want = expect[kind].get<int>();
      auto it = got.by_kind.find(kind);
      EXPECT_EQ(it == got.by_kind.end() ? 0 : it->second, want) << kind;
    }
    std::vector<std::string> want_names = expect["kernel_names"].get<std::vector<std::string>>();
    std::vector<std::string> got_names = got.kernel_names;
    std::sort(want_names.begin(), want_names.end());
    std::sort(got_names.begin(), got_names.end());
    EXPECT_EQ(got_names, want_names);
    EXPECT_TRUE(got.launches_correlate) << "a kernel without its launch call";
  }

  testing::TempDir dir_;
  testing::Gpuspyd daemon_{{.binary = GPUSPYD_BIN, .dir = dir_.path()}};
  int port_ = 0;
};

TEST_F(InjectE2E, CapturesExactlyWhatTheProgramDid) {
  StartDaemon();
  const std::string expect = dir_.path() + "/expect.json";
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--steps", "5", "--kernels", "20", "--expect", expect},
                             Env("exact"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const KindCounts got = Collected("exact");
  ASSERT_EQ(got.processes, 1);
  ExpectExactly(Expect(expect), got);
  EXPECT_EQ(got.identity.job_id(), "exact");
  ASSERT_EQ(got.identity.devices_size(), 1);
  EXPECT_EQ(got.identity.devices(0).name(), "Fake H100");
  EXPECT_EQ(got.identity.devices(0).sm_count(), 132u);
  EXPECT_EQ(got.identity.source(), "inject");
  EXPECT_EQ(got.graph_kernels, 5 * 3);  // CUDA graph nodes keep their graph id
  // Steps come from the program's ProfilerStep NVTX ranges.
  RunResult steps = testing::Run({GPUSPY_BIN, "--collector", Address(), "--json", "steps", "--job", "exact"});
  ASSERT_EQ(steps.exit_code, 0) << steps.err;
  EXPECT_EQ(nlohmann::json::parse(steps.out)["steps"].size(), 5u);
}

// GPUSPY_COUNTERS=1: the fake GPU's performance monitor sees 80% tensor / 30% DRAM while the
// bf16 GEMM runs and 0% / 90% while the elementwise kernel does (fake_train --counters). With
// kernels of 4 ms and samples of 0.5 ms, most samples fall inside one kernel: each class's reading
// is its own, and the step's is the time-weighted mix of the kernels it ran.
TEST_F(InjectE2E, CountersReadEachKernelClassAndTheStepAsTheGpuRanThem) {
  StartDaemon();
  std::vector<std::string> env = Env("counters");
  env.push_back("GPUSPY_COUNTERS=1");
  env.push_back("GPUSPY_COUNTER_INTERVAL_US=500");
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--steps", "8", "--kernels", "5", "--kernel-us", "4000",
                              "--counters"},
                             env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("hardware counters on device 0 (GH100): 4 of 4 metrics every 500 us"),
            std::string::npos)
      << r.err;
  RunResult report = testing::Run(
      {GPUSPY_BIN, "--collector", Address(), "--json", "report", "--job", "counters", "--all"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const nlohmann::json reports = nlohmann::json::parse(report.out)["reports"];
  // int64 fields are strings in proto's JSON.
  auto i64 = [](const nlohmann::json& j, const char* key) {
    return j.contains(key) ? std::stod(j[key].get<std::string>()) : 0.0;
  };
  int fully_sampled = 0;
  for (const nlohmann::json& rep : reports) {
    if (!rep["floor"].contains("counters")) continue;
    const nlohmann::json& c = rep["floor"]["counters"];
    // Sampling starts within a flush period of the context's creation, maybe inside the first
    // step: only steps sampled through hold every class's samples.
    const double wall = i64(rep["breakdown"], "wall_ns");
    if (i64(c, "sampled_ns") < 0.99 * wall) continue;
    ++fully_sampled;
    std::map<std::string, nlohmann::json> classes;
    for (const nlohmann::json& k : c.value("classes", nlohmann::json::array())) {
      classes[k["kernel_class"]] = k["readings"];
    }
    ASSERT_TRUE(classes.contains("gemm_tc")) << c.dump();
    ASSERT_TRUE(classes.contains("elementwise")) << c.dump();
    // A class's samples are those its kernels fill for 80% or more: the two at a kernel's edges
    // mix in up to a fifth of the neighbour (at most 60 points away), over >= 8 samples of 4 ms:
    // within 3 points (step_counters_test checks the rule exactly).
    EXPECT_NEAR(classes["gemm_tc"].value("tensor_active_pct", 0.0), 80.0, 3.0);
    EXPECT_NEAR(classes["gemm_tc"].value("dram_throughput_pct", 0.0), 30.0, 3.0);
    EXPECT_NEAR(classes["elementwise"].value("tensor_active_pct", 0.0), 0.0, 3.0);
    EXPECT_NEAR(classes["elementwise"].value("dram_throughput_pct", 0.0), 90.0, 3.0);
    EXPECT_NEAR(classes["gemm_tc"].value("sm_active_pct", 0.0), 100.0, 0.01);
    // Over the whole step: 80% while the GEMM ran, nothing otherwise.
    double gemm_ns = 0;
    for (const nlohmann::json& k : rep["kernel_classes"]) {
      if (k["kernel_class"] == "gemm_tc") gemm_ns = i64(k, "ns");
    }
    ASSERT_GT(gemm_ns, 0) << rep["kernel_classes"].dump();
    // A sample straddling the step's ends mixes in the next step's first or the last step's
    // final microseconds: at most one 0.5 ms sample each side of a ~21 ms step.
    EXPECT_NEAR(c["step"].value("tensor_active_pct", 0.0), 80.0 * gemm_ns / wall, 2.5) << c.dump();
  }
  EXPECT_GE(fully_sampled, 3) << report.out;

  // The CLI says the same, in words.
  RunResult text = testing::Run(
      {GPUSPY_BIN, "--collector", Address(), "report", "--job", "counters", "--step", "5"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  counters (device 0, "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("    gemm_tc ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" sampled): tensor pipes "), std::string::npos) << text.out;
}

// Without GPUSPY_COUNTERS nothing samples; with it and the counters restricted to admin users,
// the program runs on, traced, and the log says why in one line.
TEST_F(InjectE2E, CountersOffByDefaultAndRefusedCountersCostOnlyThemselves) {
  StartDaemon();
  RunResult plain = testing::Run({FAKE_TRAIN_BIN, "--steps", "3", "--counters"}, Env("nocounters"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err.find("hardware counters"), std::string::npos) << plain.err;
  RunResult report = testing::Run(
      {GPUSPY_BIN, "--collector", Address(), "--json", "report", "--job", "nocounters", "--all"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.out.find("\"counters\""), std::string::npos);

  std::vector<std::string> env = Env("denied");
  env.push_back("GPUSPY_COUNTERS=1");
  env.push_back("FAKE_PM_DENIED=1");
  const std::string expect = dir_.path() + "/denied.json";
  RunResult denied = testing::Run({FAKE_TRAIN_BIN, "--steps", "3", "--counters", "--expect", expect}, env);
  ASSERT_EQ(denied.exit_code, 0) << denied.err;
  EXPECT_NE(denied.err.find("hardware counters off on device 0: cuptiPmSamplingEnable: the GPU's "
                            "performance counters are restricted to admin users"),
            std::string::npos)
      << denied.err;
  const KindCounts got = Collected("denied");
  EXPECT_EQ(got.by_kind.at("kernels"), Expect(expect)["kernels"].get<int>());
}

TEST_F(InjectE2E, GraphTraceReplacesNodeKernelsWhenAskedFor) {
  StartDaemon();
  std::vector<std::string> env = Env("graphs");
  env.push_back("GPUSPY_KINDS=kernel,runtime,driver,graph");
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--steps", "3"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const KindCounts got = Collected("graphs");
  EXPECT_EQ(got.by_kind.at("graph_launches"), 3);
  EXPECT_EQ(got.graph_kernels, 0);
  EXPECT_EQ(got.by_kind.count("memcpy"), 0u);  // not asked for
}

TEST_F(InjectE2E, NonCudaProcessesLoadNothingButTheShim) {
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--no-cuda", "--print-maps"}, Env("none", "127.0.0.1:1"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("libgpuspy.so"), std::string::npos);
  EXPECT_EQ(r.out.find("libgpuspy_inject"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libgpuspy_core"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
  RunResult t = testing::Run({"/bin/true"}, Env("none", "127.0.0.1:1"));
  EXPECT_EQ(t.exit_code, 0);
  EXPECT_TRUE(t.err.empty()) << t.err;
}

TEST_F(InjectE2E, CollectorDownAtStartThenUpLosesNothing) {
  const int port = testing::FreeTcpPort();
  const std::string expect = dir_.path() + "/expect.json";
  Process app({FAKE_TRAIN_BIN, "--steps", "25", "--kernels", "10", "--sleep-us", "150000", "--expect", expect},
              dir_.path() + "/app.log", Env("late", "127.0.0.1:" + std::to_string(port)));
  // Longer than the first connection attempt (2 s): the app runs on, spilling.
  std::this_thread::sleep_for(std::chrono::milliseconds(2600));
  StartDaemon(port);
  ASSERT_EQ(app.Stop(0, std::chrono::seconds(30)), 0) << testing::ReadFile(dir_.path() + "/app.log");
  const std::string log = testing::ReadFile(dir_.path() + "/app.log");
  EXPECT_NE(log.find("unreachable"), std::string::npos) << log;
  EXPECT_EQ(log.find(" 0 spilled"), std::string::npos) << "nothing was spilled: " << log;
  ExpectExactly(Expect(expect), Collected("late"));
}

TEST_F(InjectE2E, BusyCuptiLeavesTheAppRunningAndSaysWhy) {
  StartDaemon();
  std::vector<std::string> env = Env("busy");
  env.push_back("FAKE_CUPTI_BUSY=1");
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--steps", "2"}, env);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("CUPTI is already in use"), std::string::npos) << r.err;
  EXPECT_EQ(Collected("busy").processes, 0);
}

TEST_F(InjectE2E, ForkedChildIsInertAndParentIsComplete) {
  StartDaemon();
  const std::string expect = dir_.path() + "/expect.json";
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--steps", "3", "--fork", "--expect", expect}, Env("fork"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const KindCounts got = Collected("fork");
  EXPECT_EQ(got.processes, 1);
  ExpectExactly(Expect(expect), got);
}

TEST_F(InjectE2E, ExecedChildIsProfiledAsItsOwnProcess) {
  StartDaemon();
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--steps", "2", "--exec-child"}, Env("exec"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Collected("exec").processes, 2);
}

TEST_F(InjectE2E, CoreWorksAsTheInjectionLibraryDirectly) {
  StartDaemon();
  std::vector<std::string> env = Env("direct");
  env[0] = "LD_PRELOAD=";
  env.push_back("CUDA_INJECTION64_PATH=" + std::string(CORE_LIB));
  const std::string expect = dir_.path() + "/expect.json";
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--steps", "2", "--expect", expect}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectExactly(Expect(expect), Collected("direct"));
}

TEST_F(InjectE2E, DisabledMeansNothingLoadsAndNothingIsSent) {
  StartDaemon();
  std::vector<std::string> env = Env("off");
  env.push_back("GPUSPY_DISABLE=1");
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--steps", "2", "--print-maps"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("libgpuspy_core"), std::string::npos);
  EXPECT_EQ(Collected("off").processes, 0);
}

TEST_F(InjectE2E, ApplicationWithItsOwnGrpcRunsUnharmedAndGpuspyStepsAside) {
  StartDaemon();
  std::vector<std::string> env = Env("foreign");
  env[0] = "LD_PRELOAD=" + std::string(SHIM_LIB) + ":" + std::string(FOREIGN_GRPC_LIB);
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--steps", "2", "--print-maps"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("degraded: the application exports grpc_init"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("libgpuspy_core"), std::string::npos) << r.out;
  EXPECT_EQ(Collected("foreign").processes, 0);
}

TEST_F(InjectE2E, GpuspyRunInjectsTheCommand) {
  StartDaemon();
  std::vector<std::string> env = Env("");
  env[0] = "LD_PRELOAD=";
  env.push_back("GPUSPY_LIB=" + std::string(SHIM_LIB));
  RunResult r = testing::Run({GPUSPY_BIN, "--collector", Address(), "run", "--job", "viarun", "--",
                              FAKE_TRAIN_BIN, "--steps", "2"},
                             env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Collected("viarun").processes, 1);
  // It ends saying where the report is, and passes the command's exit status on.
  EXPECT_NE(r.err.find("exited with status 0; its report: `gpuspy report --job viarun`"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no gpuspyd answers"), std::string::npos) << r.err;
  RunResult three = testing::Run({GPUSPY_BIN, "--collector", Address(), "run", "--job", "viarun",
                                  "--", "sh", "-c", "exit 3"}, env);
  EXPECT_EQ(three.exit_code, 3);
  // No collector: said before the command starts, and the command runs all the same.
  RunResult alone = testing::Run({GPUSPY_BIN, "--collector", "127.0.0.1:1", "run", "--", "sh",
                                  "-c", "echo ran"}, env);
  EXPECT_EQ(alone.exit_code, 0);
  EXPECT_EQ(alone.out, "ran\n");
  EXPECT_NE(alone.err.find("no gpuspyd answers at 127.0.0.1:1; running anyway"), std::string::npos)
      << alone.err;
  RunResult missing = testing::Run({GPUSPY_BIN, "run", "--", "/nonexistent/program"}, env);
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.err.find("cannot run /nonexistent/program: No such file or directory"),
            std::string::npos) << missing.err;
  EXPECT_EQ(missing.err.find("its report"), std::string::npos) << missing.err;
}

TEST_F(InjectE2E, GpuspyRunSaysWhenTheCommandNeverInitialisedCuda) {
  StartDaemon();
  std::vector<std::string> env = Env("");
  env[0] = "LD_PRELOAD=";
  env.push_back("GPUSPY_LIB=" + std::string(SHIM_LIB));
  // A command without CUDA: it succeeds, and run says nothing was captured instead of pointing at
  // a report that `gpuspy report` would answer with "no job".
  RunResult r = testing::Run({GPUSPY_BIN, "--collector", Address(), "run", "--job", "nocuda", "--",
                              "sh", "-c", "echo 1"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_NE(r.err.find("sh exited with status 0; it never initialised CUDA, so nothing was captured "
                       "and there is no report for job 'nocuda'"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("its report"), std::string::npos) << r.err;
  EXPECT_EQ(Collected("nocuda").processes, 0);
  // A command that did initialise CUDA is still pointed at its report.
  RunResult cuda = testing::Run({GPUSPY_BIN, "--collector", Address(), "run", "--job", "withcuda",
                                 "--", FAKE_TRAIN_BIN, "--steps", "1"}, env);
  ASSERT_EQ(cuda.exit_code, 0) << cuda.err;
  EXPECT_NE(cuda.err.find("its report: `gpuspy report --job withcuda`"), std::string::npos) << cuda.err;
  EXPECT_EQ(cuda.err.find("never initialised CUDA"), std::string::npos) << cuda.err;
}

}  // namespace
}  // namespace gpuspy
