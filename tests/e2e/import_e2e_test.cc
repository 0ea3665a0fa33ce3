// Real PyTorch profiler traces (../shared/traces, from HTA's test data) imported through the
// real collector. Expected numbers are computed independently by python3 from the same files.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

// Counts the trace's complete events by category, the way the importer is specified to map them.
constexpr char kCounter[] = R"py(
import gzip, json, sys, collections, re
d = json.load(gzip.open(sys.argv[1]) if sys.argv[1].endswith('.gz') else open(sys.argv[1]))
c = collections.Counter()
steps = 0
for e in d["traceEvents"]:
    if e.get("ph") != "X" or e.get("dur", 0) < 0:
        continue
    cat = e.get("cat")
    if cat in ("cuda_runtime", "cuda_driver"):
        c["api"] += 1
    elif cat in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"):
        c[cat] += 1
    elif cat in ("user_annotation", "cpu_op", "python_function", "Trace", "cuda_profiler_range"):
        c["host_range"] += 1
    if cat == "kernel" and "Collective name" in e.get("args", {}):
        c["collective"] += 1
    if cat == "user_annotation" and re.fullmatch(r"ProfilerStep#\d+", e.get("name", "")):
        steps += 1
c["steps"] = steps
print(json.dumps(c))
)py";

std::string TraceDir() { return std::string(SOURCE_DIR) + "/../shared/traces"; }

class ImportE2E : public ::testing::TestWithParam<std::string> {};

TEST_P(ImportE2E, EveryGpuEventAndStepOfTheTraceArrives) {
  const std::string file = TraceDir() + "/" + GetParam();
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " not present (shared/ not beside the repo)";
  testing::TempDir dir;
  testing::Gpuspyd daemon({.binary = GPUSPYD_BIN, .dir = dir.path()});
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  const std::string address = daemon.address();

  testing::RunResult expected = testing::Run({"python3", "-c", kCounter, file});
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  const auto want = nlohmann::json::parse(expected.out);

  testing::RunResult imported =
      testing::Run({GPUSPY_BIN, "--collector", address, "import", "--job", "t", file});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;

  auto stub = v1::Query::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  v1::GetEventsRequest req;
  req.set_job_id("t");
  req.set_limit(5'000'000);
  v1::GetEventsResponse resp;
  ASSERT_TRUE(stub->GetEvents(&ctx, req, &resp).ok());
  std::map<std::string, int> got;
  for (const auto& p : resp.processes()) {
    for (const auto& e : p.events()) {
      switch (e.kind_case()) {
        case v1::Event::kKernel: got["kernel"]++; break;
        case v1::Event::kMemcpy: got["gpu_memcpy"]++; break;
        case v1::Event::kMemset: got["gpu_memset"]++; break;
        case v1::Event::kSync: got["cuda_sync"]++; break;
        case v1::Event::kApi: got["api"]++; break;
        case v1::Event::kNvtxRange: got["host_range"]++; break;
        case v1::Event::kCollective: got["collective"]++; break;
        default: got["other"]++; break;
      }
    }
  }
  for (const char* kind :
       {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "api", "host_range", "collective"}) {
    EXPECT_EQ(got[kind], want.value(kind, 0)) << kind;
  }
  EXPECT_EQ(got["other"], 0);

  // ProfilerStep ranges become the job's steps, and each gets a report.
  const int steps = want["steps"].get<int>();
  if (steps > 0) {
    grpc::ClientContext rctx;
    v1::GetStepReportRequest rreq;
    rreq.set_job_id("t");
    rreq.set_all(true);
    v1::GetStepReportResponse rresp;
    ASSERT_TRUE(stub->GetStepReport(&rctx, rreq, &rresp).ok());
    EXPECT_EQ(rresp.reports_size(), steps);
    for (const auto& r : rresp.reports()) {
      EXPECT_EQ(r.step().source().rfind("nvtx:", 0), 0u);
      EXPECT_FALSE(r.primary_bottleneck().empty());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, ImportE2E,
                         ::testing::Values("alexnet_a100.json.gz", "event_sync_a100.json.gz",
                                           "triton_a100.json.gz", "sampled_rank-0.json.gz",
                                           "sampled_rank-1.json.gz", "nccl_a100.json.gz"),
                         [](const auto& info) {
                           std::string n = info.param.substr(0, info.param.find('.'));
                           for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

TEST(ImportE2EErrors, BadFilesGiveOneClearLine) {
  testing::TempDir dir;
  const std::string junk = dir.path() + "/junk.json";
  std::ofstream(junk) << "{\"traceEvents\": [ {\"ph\": ";
  testing::RunResult r = testing::Run({GPUSPY_BIN, "--collector", "127.0.0.1:1", "import", junk});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gpuspy import: " + junk + ": not valid trace JSON at byte"), std::string::npos)
      << r.err;
  testing::RunResult missing = testing::Run({GPUSPY_BIN, "import", dir.path() + "/nope.json"});
  EXPECT_NE(missing.exit_code, 0);
}

}  // namespace
}  // namespace gpuspy
