// Export to Chrome/Perfetto trace JSON: structurally valid (checked by python3's json module and
// the trace format's rules), and import(export(job)) gives back the same events and verdicts.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "analysis/detector_names.h"
#include "gpuspy/v1/services.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {

using analysis::DetectorName;

namespace {

constexpr char kValidate[] = R"py(
import gzip, json, sys
f = sys.argv[1]
d = json.load(gzip.open(f) if f.endswith('.gz') else open(f))
ev = d["traceEvents"]
assert isinstance(d["baseTimeNanoseconds"], int)
starts, ends = set(), set()
for e in ev:
    assert e["ph"] in ("X", "M", "s", "f", "i"), e
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
    if e["ph"] != "M":
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
    if e["ph"] == "X":
        assert e["dur"] >= 0 and e["name"] and e["cat"], e
    if e["ph"] == "s": starts.add(e["id"])
    if e["ph"] == "f": ends.add(e["id"])
assert ends <= starts, "flow arrows without a launch"
kinds = {e.get("cat") for e in ev}
assert {"kernel", "cuda_runtime", "gpu_memcpy", "user_annotation", "gpuspy_step", "gpuspy_finding"} <= kinds, kinds
names = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"]
assert any(n.startswith("GPU 0 stream ") for n in names), names
assert any(n.startswith("thread ") or n.startswith("main thread ") for n in names), names
print(len(ev))
)py";

class ExportE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start()) << daemon_.log();
    address_ = daemon_.address();
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);  // a page is at most ~16 MiB
    stub_ = v1::Query::NewStub(
        grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), args));
  }

  // Every event of the job, page by page through the cursor, by process.
  std::map<uint64_t, std::vector<v1::Event>> Events(const std::string& job) {
    std::map<uint64_t, std::vector<v1::Event>> out;
    v1::GetEventsRequest req;
    req.set_job_id(job);
    for (;;) {
      grpc::ClientContext ctx;
      v1::GetEventsResponse resp;
      EXPECT_TRUE(stub_->GetEvents(&ctx, req, &resp).ok());
      for (auto& p : *resp.mutable_processes()) {
        for (auto& e : *p.mutable_events()) out[p.process_id()].push_back(std::move(e));
      }
      if (resp.next_cursor().empty()) return out;
      req.set_cursor(resp.next_cursor());
    }
  }

  // (kind, start, end, correlation, name) of every event Kineto's format can carry.
  std::multiset<std::tuple<int, int64_t, int64_t, uint64_t, std::string>> Projection(const std::string& job) {
    std::multiset<std::tuple<int, int64_t, int64_t, uint64_t, std::string>> out;
    for (const auto& [process_id, events] : Events(job)) {
      for (const auto& e : events) {
        switch (e.kind_case()) {
          case v1::Event::kKernel:
            out.insert({1, e.kernel().start_ns(), e.kernel().end_ns(), e.kernel().correlation_id(), e.kernel().name()});
            break;
          case v1::Event::kMemcpy:
            out.insert({2, e.memcpy().start_ns(), e.memcpy().end_ns(), e.memcpy().correlation_id(),
                        std::to_string(e.memcpy().bytes()) + v1::CopyKind_Name(e.memcpy().copy_kind())});
            break;
          case v1::Event::kMemset:
            out.insert({3, e.memset().start_ns(), e.memset().end_ns(), e.memset().correlation_id(), ""});
            break;
          case v1::Event::kSync:
            out.insert({4, e.sync().start_ns(), e.sync().end_ns(), e.sync().correlation_id(),
                        v1::SyncKind_Name(e.sync().sync_kind())});
            break;
          case v1::Event::kApi:
            out.insert({5, e.api().start_ns(), e.api().end_ns(), e.api().correlation_id(), e.api().name()});
            break;
          case v1::Event::kNvtxRange:
            out.insert({6, e.nvtx_range().start_ns(), e.nvtx_range().end_ns(), 0, e.nvtx_range().message()});
            break;
          default:
            break;
        }
      }
    }
    return out;
  }

  // Every field of every collective of the job, with the name of its kernel.
  std::multiset<std::string> Collectives(const std::string& job) {
    std::multiset<std::string> out;
    for (const auto& [process_id, events] : Events(job)) {
      std::map<uint64_t, std::string> kernels;
      for (const auto& e : events) {
        if (e.has_kernel()) kernels[e.kernel().correlation_id()] = e.kernel().name();
      }
      for (const auto& e : events) {
        if (!e.has_collective()) continue;
        const v1::Collective& c = e.collective();
        out.insert(absl::StrCat(kernels[c.correlation_id()], " ", c.correlation_id(), " ", c.op(),
                                " ", c.dtype(), " ", c.group(), " ", c.in_bytes(), " ",
                                c.out_bytes(), " ", c.group_size(), " ", c.sequence()));
      }
    }
    return out;
  }

  std::vector<std::pair<int64_t, std::string>> Verdicts(const std::string& job) {
    grpc::ClientContext ctx;
    v1::GetStepReportRequest req;
    req.set_job_id(job);
    req.set_all(true);
    v1::GetStepReportResponse resp;
    EXPECT_TRUE(stub_->GetStepReport(&ctx, req, &resp).ok());
    std::vector<std::pair<int64_t, std::string>> out;
    for (const auto& r : resp.reports()) out.push_back({r.step().number(), DetectorName(r.primary_bottleneck())});
    return out;
  }

  // Per step: number, verdict, and device memory (source, reserved and allocated at the end).
  std::vector<std::string> StepMemory(const std::string& job) {
    grpc::ClientContext ctx;
    v1::GetStepReportRequest req;
    req.set_job_id(job);
    req.set_all(true);
    v1::GetStepReportResponse resp;
    EXPECT_TRUE(stub_->GetStepReport(&ctx, req, &resp).ok());
    std::vector<std::string> out;
    for (const auto& r : resp.reports()) {
      out.push_back(absl::StrCat(r.step().number(), " ", DetectorName(r.primary_bottleneck()), " ",
                                 r.memory().source(), " ", r.memory().reserved_end_bytes(), " ",
                                 r.memory().allocated_end_bytes()));
    }
    return out;
  }

  testing::TempDir dir_;
  testing::Gpuspyd daemon_{{.binary = GPUSPYD_BIN, .dir = dir_.path()}};
  std::string address_;
  std::unique_ptr<v1::Query::Stub> stub_;
};

TEST_F(ExportE2E, ExportIsAValidTraceAndImportOfItGivesTheSameEventsAndVerdicts) {
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", address_, "--job", "orig", "--scenario",
                          "launch_storm", "--steps", "5"})
                .exit_code,
            0);
  const std::string file = dir_.path() + "/orig.json.gz";
  testing::RunResult exported =
      testing::Run({GPUSPY_BIN, "--collector", address_, "export", "--job", "orig", "-o", file});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  testing::RunResult valid = testing::Run({"python3", "-c", kValidate, file});
  ASSERT_EQ(valid.exit_code, 0) << valid.err;

  testing::RunResult imported =
      testing::Run({GPUSPY_BIN, "--collector", address_, "import", "--job", "copy", file});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const auto original = Projection("orig");
  ASSERT_GT(original.size(), 10000u);
  EXPECT_TRUE(Projection("copy") == original) << "events differ after the round trip";
  EXPECT_EQ(Verdicts("copy"), Verdicts("orig"));
}

// Issue 35: export then import changed the event count (1,945 -> 1,440) with no word why. The
// export says what a re-import will lack and how many, the trace carries the counts, and the
// import names them: the two jobs' counts differ by exactly that.
TEST_F(ExportE2E, ExportAndReimportSayWhatTheFormatCannotCarry) {
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", address_, "--job", "src", "--scenario",
                          "sync_stall", "--steps", "4"})
                .exit_code,
            0);
  const std::string file = dir_.path() + "/src.json";
  testing::RunResult exported =
      testing::Run({GPUSPY_BIN, "--collector", address_, "export", "--job", "src", "-o", file});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(exported.out.find("from 1 process;"), std::string::npos) << exported.out;
  EXPECT_NE(exported.out.find("a re-import of this trace holds "), std::string::npos) << exported.out;
  EXPECT_NE(exported.out.find(" external correlation records"), std::string::npos) << exported.out;
  const auto doc = nlohmann::json::parse(testing::ReadFile(file));
  ASSERT_TRUE(doc.contains("gpuspyNotExported")) << "the counts travel with the trace";
  uint64_t lacking = 0;
  for (const auto& [what, n] : doc["gpuspyNotExported"].items()) lacking += n.get<uint64_t>();

  testing::RunResult imported =
      testing::Run({GPUSPY_BIN, "--collector", address_, "import", "--job", "back", file});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("fewer events than their source: the gpuspy export that wrote " + file +
                              " counted " + std::to_string(lacking) + " events"),
            std::string::npos) << imported.out;
  size_t src = 0, back = 0;
  for (const auto& [id, events] : Events("src")) src += events.size();
  for (const auto& [id, events] : Events("back")) back += events.size();
  EXPECT_EQ(src - back, lacking) << "the counts explain the whole difference";
}

// Issue 22: `gpuspy export` asked for 5 M events in one answer. It now reads page by page into
// the file: a job of several pages comes out whole and valid.
TEST_F(ExportE2E, AJobOfManyPagesExportsWhole) {
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", address_, "--job", "big", "--scenario",
                          "launch_storm", "--steps", "30"})
                .exit_code,
            0);
  const std::string file = dir_.path() + "/big.json";
  testing::RunResult exported =
      testing::Run({GPUSPY_BIN, "--collector", address_, "export", "--job", "big", "-o", file});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  testing::RunResult valid = testing::Run({"python3", "-c", kValidate, file});
  ASSERT_EQ(valid.exit_code, 0) << valid.err;

  uint64_t kernels = 0, events = 0;
  for (const auto& [process_id, list] : Events("big")) {
    events += list.size();
    for (const auto& e : list) kernels += e.has_kernel() || e.has_graph_launch();  // kernel spans
  }
  ASSERT_GT(events, 200'000u);  // more than two pages
  std::ifstream in(file);
  const nlohmann::json doc = nlohmann::json::parse(in);
  uint64_t kernel_spans = 0;
  for (const auto& e : doc["traceEvents"]) kernel_spans += e["ph"] == "X" && e["cat"] == "kernel";
  EXPECT_EQ(kernel_spans, kernels);
}

// NCCL kernels carry their collective's args (PyTorch's names), which an import reads back.
TEST_F(ExportE2E, CollectivesSurviveExportAndReimport) {
  const std::string trace = std::string(SOURCE_DIR) + "/../shared/traces/nccl_a100.json.gz";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << trace << " not present";
  testing::RunResult imported =
      testing::Run({GPUSPY_BIN, "--collector", address_, "import", "--job", "nccl", trace});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const std::string file = dir_.path() + "/nccl.json";
  testing::RunResult exported =
      testing::Run({GPUSPY_BIN, "--collector", address_, "export", "--job", "nccl", "-o", file});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const std::string json = testing::ReadFile(file);
  EXPECT_NE(json.find("\"Collective name\":\"allreduce\""), std::string::npos);
  EXPECT_NE(json.find("\"In msg nelems\":6637568"), std::string::npos);
  EXPECT_NE(json.find("\"In msg bytes\":26550272"), std::string::npos);
  testing::RunResult again =
      testing::Run({GPUSPY_BIN, "--collector", address_, "import", "--job", "nccl2", file});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto original = Collectives("nccl");
  EXPECT_EQ(original.size(), 21u);
  EXPECT_TRUE(Collectives("nccl2") == original) << "collectives differ after the round trip";
}

// Host-side truth survives the export: every CPU op, user annotation and profiler range of a
// real trace is in the exported file, in its Kineto category, as many as the source holds
// (counted independently of gpuspy, with python3's json and gzip).
TEST_F(ExportE2E, HostOpsSurviveTheExport) {
  const std::string trace = std::string(SOURCE_DIR) + "/../shared/traces/nccl_a100.json.gz";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << trace << " not present";
  ASSERT_EQ(testing::Run({GPUSPY_BIN, "--collector", address_, "import", "--job", "host", trace})
                .exit_code, 0);
  const std::string file = dir_.path() + "/host.json";
  ASSERT_EQ(testing::Run({GPUSPY_BIN, "--collector", address_, "export", "--job", "host", "-o", file})
                .exit_code, 0);
  const char* kCount =
      "import collections, gzip, json, sys\n"
      "p = sys.argv[1]\n"
      "d = json.load(gzip.open(p) if p.endswith('.gz') else open(p))\n"
      "c = collections.Counter(e.get('cat') for e in d['traceEvents'])\n"
      "print(json.dumps({k: c[k] for k in ('cpu_op', 'user_annotation', 'Trace')}))\n";
  testing::RunResult source = testing::Run({"python3", "-c", kCount, trace});
  testing::RunResult exported = testing::Run({"python3", "-c", kCount, file});
  ASSERT_EQ(source.exit_code, 0) << source.err;
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const auto want = nlohmann::json::parse(source.out);
  EXPECT_GT(want["cpu_op"].get<int>(), 1000);
  EXPECT_EQ(nlohmann::json::parse(exported.out), want);
}

// A profile_memory=True trace's allocator totals ([memory] events) are exported as [memory]
// events again: re-imported, every step has the same memory and the same verdict (a leak).
TEST_F(ExportE2E, AllocatorMemorySurvivesExportAndReimport) {
  nlohmann::json events = nlohmann::json::array();
  int64_t allocated = 1ll << 30;
  for (int s = 0; s < 8; ++s) {
    const int64_t t0 = 1'000 + s * 10'000;  // us
    events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"pid", 7}, {"tid", 7},
                      {"name", absl::StrCat("ProfilerStep#", s)}, {"ts", t0}, {"dur", 10'000}});
    events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"},
                      {"pid", 7}, {"tid", 7}, {"ts", t0 + 10}, {"dur", 5},
                      {"args", {{"correlation", s + 1}, {"cbid", 211}}}});
    allocated += 80ll << 20;  // kept every step: a leak
    events.push_back({{"ph", "i"}, {"cat", "cpu_instant_event"}, {"s", "t"}, {"name", "[memory]"},
                      {"pid", 7}, {"tid", 7}, {"ts", t0 + 100},
                      {"args", {{"Device Type", 1}, {"Device Id", 0}, {"Bytes", 80ll << 20},
                                {"Total Allocated", allocated},
                                {"Total Reserved", allocated + (256ll << 20)}}}});
  }
  const std::string trace = dir_.path() + "/memory.json";
  {
    std::ofstream out(trace);
    out << nlohmann::json{{"traceEvents", events}}.dump();
  }
  ASSERT_EQ(testing::Run({GPUSPY_BIN, "--collector", address_, "import", "--job", "mem", trace})
                .exit_code,
            0);
  const std::string file = dir_.path() + "/mem-export.json";
  testing::RunResult exported =
      testing::Run({GPUSPY_BIN, "--collector", address_, "export", "--job", "mem", "-o", file});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(testing::ReadFile(file).find("\"[memory]\""), std::string::npos);
  testing::RunResult again =
      testing::Run({GPUSPY_BIN, "--collector", address_, "import", "--job", "mem2", file});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto original = StepMemory("mem");
  ASSERT_EQ(original.size(), 8u);
  EXPECT_EQ(original.back().substr(0, 25), "7 memory_growth allocator");
  EXPECT_EQ(StepMemory("mem2"), original);
}

TEST_F(ExportE2E, StepRangeExportsOnlyThoseSteps) {
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", address_, "--job", "j", "--steps", "6"}).exit_code, 0);
  const std::string file = dir_.path() + "/part.json";
  ASSERT_EQ(testing::Run({GPUSPY_BIN, "--collector", address_, "export", "--job", "j", "--steps",
                          "2-3", "-o", file})
                .exit_code,
            0);
  const std::string json = testing::ReadFile(file);
  EXPECT_NE(json.find("\"ProfilerStep#2\""), std::string::npos);
  EXPECT_NE(json.find("\"ProfilerStep#3\""), std::string::npos);
  EXPECT_EQ(json.find("\"ProfilerStep#5\""), std::string::npos);
  testing::RunResult bad = testing::Run(
      {GPUSPY_BIN, "--collector", address_, "export", "--job", "j", "--steps", "9-2", "-o", file});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--steps '9-2'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace gpuspy
