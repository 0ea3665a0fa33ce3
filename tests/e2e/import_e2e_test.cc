// Real PyTorch profiler traces (../shared/traces, from HTA's test data) imported through the
// real collector. Expected numbers are computed independently by python3 from the same files.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/all_events.h"
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
    if cat == "cpu_op" and e.get("name") in ("aten::mm", "aten::addmm") and e.get("args", {}).get("Input Dims"):
        c["shaped_matmul"] += 1
    if cat == "cpu_op" and ("Input Dims" in e.get("args", {}) or "flops" in e.get("args", {})):
        c["shaped_or_counted_op"] += 1
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
  v1::GetEventsRequest req;
  req.set_job_id("t");
  req.set_limit(5'000'000);
  v1::GetEventsResponse resp;
  ASSERT_TRUE(gpuspy::testing::GetAllEvents(stub.get(), req, &resp).ok());
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
        case v1::Event::kOpWork: got["op_work"]++; break;
        default: got["other"]++; break;
      }
    }
  }
  for (const char* kind :
       {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "api", "host_range", "collective"}) {
    EXPECT_EQ(got[kind], want.value(kind, 0)) << kind;
  }
  EXPECT_EQ(got["other"], 0);
  // Every matmul with shapes has its work (more ops have some: elementwise bytes); none without.
  EXPECT_GE(got["op_work"], want.value("shaped_matmul", 0));
  if (want.value("shaped_or_counted_op", 0) == 0) {
    EXPECT_EQ(got["op_work"], 0) << "no shapes, no flops: no work";
  }

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
      EXPECT_NE(r.primary_bottleneck(), v1::DETECTOR_UNSPECIFIED);
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

// Imports that are safe to repeat and all or nothing (README "Importing traces").
class SafeImportE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    good_ = TraceDir() + "/alexnet_a100.json.gz";
    // Rank 1 (alexnet is rank 0): two files of one job are two ranks (two rank 0s are refused).
    other_ = TraceDir() + "/sampled_rank-1.json.gz";
    if (!std::filesystem::exists(good_) || !std::filesystem::exists(other_)) {
      GTEST_SKIP() << "shared traces not present (shared/ not beside the repo)";
    }
    ASSERT_TRUE(daemon_.Start()) << daemon_.log();
    // A gzip file cut short: the kind of file a crashed profiler leaves.
    truncated_ = dir_.path() + "/trunc.json.gz";
    std::ifstream in(TraceDir() + "/sampled_rank-1.json.gz", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(truncated_, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }

  testing::RunResult Gpuspy(std::vector<std::string> args) {
    args.insert(args.begin(), {GPUSPY_BIN, "--collector", daemon_.address()});
    return testing::Run(args);
  }

  // job id -> (processes, events), from `gpuspy jobs --json`.
  std::map<std::string, std::pair<int, uint64_t>> Jobs() {
    testing::RunResult r = Gpuspy({"--json", "jobs"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::pair<int, uint64_t>> out;
    for (const auto& j : nlohmann::json::parse(r.out).value("jobs", nlohmann::json::array())) {
      out[j["job_id"]] = {static_cast<int>(j["processes"].size()),
                          std::stoull(j.value("event_count", std::string("0")))};
    }
    return out;
  }

  testing::TempDir dir_;
  testing::Gpuspyd daemon_{{.binary = GPUSPYD_BIN, .dir = dir_.path(), .http = true}};
  std::string good_, other_, truncated_;
};

TEST_F(SafeImportE2E, ImportingTheSameFileTwiceSaysWhereItIsAndAddsNothing) {
  ASSERT_EQ(Gpuspy({"import", "--job", "t", good_}).exit_code, 0);
  const auto once = Jobs();
  ASSERT_EQ(once.at("t").first, 1);
  ASSERT_GT(once.at("t").second, 0u);
  // Again, into the same job and into another: the collector knows the content.
  for (const char* job : {"t", "elsewhere"}) {
    testing::RunResult again = Gpuspy({"import", "--job", job, good_});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.err.find("already imported as job 't'"), std::string::npos) << again.err;
  }
  EXPECT_EQ(Jobs(), once);
}

TEST_F(SafeImportE2E, ReplaceLeavesTheCountsOfASingleImport) {
  ASSERT_EQ(Gpuspy({"import", "--job", "t", good_, other_}).exit_code, 0);
  const auto once = Jobs();
  testing::RunResult replaced = Gpuspy({"import", "--job", "t", "--replace", good_});
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_NE(replaced.err.find("replaced the earlier import in job 't'"), std::string::npos) << replaced.err;
  EXPECT_EQ(Jobs(), once);
}

TEST_F(SafeImportE2E, AFileThatDoesNotReadStoresNothingAndNamesTheFile) {
  testing::RunResult r = Gpuspy({"import", "--job", "x", good_, truncated_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gpuspy import: " + truncated_ + ": truncated or corrupt gzip stream"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("compressed byte"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing imported"), std::string::npos) << r.err;
  EXPECT_TRUE(Jobs().empty());
  // Nothing half-stored either: the good file imports cleanly afterwards.
  EXPECT_EQ(Gpuspy({"import", "--job", "x", good_}).exit_code, 0);
}

TEST_F(SafeImportE2E, KeepGoingStoresTheGoodFilesWarnsAndStillFails) {
  testing::RunResult r = Gpuspy({"import", "--job", "x", "--keep-going", good_, truncated_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("WARNING: SKIPPED " + truncated_), std::string::npos) << r.err;
  const auto jobs = Jobs();
  ASSERT_EQ(jobs.count("x"), 1u);
  EXPECT_EQ(jobs.at("x").first, 1);
}

TEST_F(SafeImportE2E, JobsAreRenamedAndDeletedByCliAndHttp) {
  ASSERT_EQ(Gpuspy({"import", "--job", "a", good_}).exit_code, 0);
  ASSERT_EQ(Gpuspy({"import", "--job", "b", other_}).exit_code, 0);
  const auto before = Jobs();
  testing::RunResult taken = Gpuspy({"jobs", "rename", "a", "b"});
  EXPECT_EQ(taken.exit_code, 1);
  EXPECT_NE(taken.err.find("job 'b' exists already"), std::string::npos) << taken.err;
  testing::RunResult renamed = Gpuspy({"jobs", "rename", "a", "c"});
  EXPECT_EQ(renamed.exit_code, 0) << renamed.err;
  auto after = Jobs();
  EXPECT_EQ(after.count("a"), 0u);
  EXPECT_EQ(after.at("c"), before.at("a"));
  // An import recognised after a rename names the new job.
  EXPECT_NE(Gpuspy({"import", good_}).err.find("already imported as job 'c'"), std::string::npos);

  testing::RunResult unknown = Gpuspy({"jobs", "delete", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("unknown job 'nope'"), std::string::npos) << unknown.err;
  testing::RunResult deleted = Gpuspy({"jobs", "delete", "c"});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.err;
  after = Jobs();
  EXPECT_EQ(after.count("c"), 0u);
  EXPECT_EQ(after.at("b"), before.at("b"));
  // Deleted means forgotten: the file imports again.
  EXPECT_EQ(Gpuspy({"import", "--job", "a", good_}).exit_code, 0);
  EXPECT_EQ(Jobs().at("a"), before.at("a"));

  httplib::Client http("127.0.0.1", daemon_.http_port());
  auto rename = http.Post("/api/jobs/a/rename?to=web", "", "text/plain");
  ASSERT_TRUE(rename);
  EXPECT_EQ(rename->status, 200) << rename->body;
  auto conflict = http.Post("/api/jobs/web/rename?to=b", "", "text/plain");
  ASSERT_TRUE(conflict);
  EXPECT_EQ(conflict->status, 409) << conflict->body;
  auto del = http.Delete("/api/jobs/web");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200) << del->body;
  EXPECT_EQ(nlohmann::json::parse(del->body)["processes_deleted"], 1);
  auto missing = http.Delete("/api/jobs/web");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(Jobs().count("web"), 0u);
}

// A job with a connected process is refused (its next batches would land in a record that is
// gone, or a reconnect would bring the old name back); --force deletes it anyway.
TEST_F(SafeImportE2E, ALiveJobIsNotDeletedOrRenamedUnlessForced) {
  auto channel = grpc::CreateChannel(daemon_.address(), grpc::InsecureChannelCredentials());
  auto ingest = v1::Ingest::NewStub(channel);
  grpc::ClientContext ctx;
  auto stream = ingest->Stream(&ctx);
  v1::ClientMessage hello;
  hello.mutable_hello()->mutable_identity()->set_process_key("live-e2e:1");
  hello.mutable_hello()->mutable_identity()->set_job_id("live");
  ASSERT_TRUE(stream->Write(hello));
  v1::ServerMessage welcome;
  ASSERT_TRUE(stream->Read(&welcome));
  ASSERT_TRUE(welcome.has_welcome());
  // The stream is registered as live right after its Welcome is written: wait until it shows.
  auto query = v1::Query::NewStub(channel);
  for (bool live = false; !live;) {
    grpc::ClientContext lctx;
    v1::ListJobsResponse jobs;
    ASSERT_TRUE(query->ListJobs(&lctx, {}, &jobs).ok());
    live = jobs.jobs_size() == 1 && jobs.jobs(0).processes(0).state() != "disconnected";
  }
  testing::RunResult refused = Gpuspy({"jobs", "delete", "live"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("job 'live' is live: 1 of its processes are still connected"), std::string::npos)
      << refused.err;
  testing::RunResult rename = Gpuspy({"jobs", "rename", "live", "other"});
  EXPECT_EQ(rename.exit_code, 1);
  EXPECT_NE(rename.err.find("is live"), std::string::npos) << rename.err;
  EXPECT_EQ(Jobs().count("live"), 1u);
  testing::RunResult forced = Gpuspy({"jobs", "delete", "live", "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_TRUE(Jobs().empty());
  stream->WritesDone();
  (void)stream->Finish();
}

// The rule holds in the collector, not only in the CLI: a client that skips FindImports and says
// Hello with the content hash of a stored import, under another process key, is refused.
TEST_F(SafeImportE2E, TheCollectorRefusesASecondProcessWithTheSameContent) {
  ASSERT_EQ(Gpuspy({"import", "--job", "t", good_}).exit_code, 0);
  auto query = v1::Query::NewStub(grpc::CreateChannel(daemon_.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext lctx;
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(query->ListJobs(&lctx, {}, &jobs).ok());
  const std::string sha = jobs.jobs(0).processes(0).identity().content_sha256();
  ASSERT_EQ(sha.size(), 64u);

  auto ingest = v1::Ingest::NewStub(grpc::CreateChannel(daemon_.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  auto stream = ingest->Stream(&ctx);
  v1::ClientMessage hello;
  hello.mutable_hello()->mutable_identity()->set_process_key("another-client:1");
  hello.mutable_hello()->mutable_identity()->set_job_id("other");
  hello.mutable_hello()->mutable_identity()->set_content_sha256(sha);
  ASSERT_TRUE(stream->Write(hello));
  stream->WritesDone();
  v1::ServerMessage m;
  while (stream->Read(&m)) {
  }
  grpc::Status st = stream->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::ALREADY_EXISTS) << st.error_message();
  EXPECT_NE(st.error_message().find("already imported as job 't'"), std::string::npos) << st.error_message();
  EXPECT_EQ(Jobs().count("other"), 0u);
}

}  // namespace
}  // namespace gpuspy
