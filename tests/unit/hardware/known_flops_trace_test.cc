// A trace whose FLOPs are known by construction (bf16 8192^3 matmuls and a float add on an
// H100, recorded with record_shapes=True) read as `gpuspy analyze` reads it: the importer's
// shapes, the device from deviceProperties, the job pass's peaks. Then exported and read back:
// the same floor. Every expected figure is computed here from the construction.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/job_analysis.h"
#include "analysis/process_analysis.h"
#include "codec/expanded_events.h"
#include "exporters/chrome_trace/chrome_trace_writer.h"
#include "importers/kineto/kineto_reader.h"

namespace gpuspy {
namespace {

using nlohmann::json;

constexpr int kSteps = 4;
constexpr double kStepUs = 5000, kMatmulUs = 2500, kAddUs = 100;
constexpr uint64_t kN = 8192;

json Span(const std::string& cat, const std::string& name, int tid, double ts, double dur, json args = json::object()) {
  return {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 1}, {"tid", tid}, {"ts", ts}, {"dur", dur},
          {"args", std::move(args)}};
}

std::string ConstructedTrace() {
  json events = json::array();
  int corr = 100;
  for (int s = 0; s < kSteps; ++s) {
    const double t0 = 1e6 + s * kStepUs;
    events.push_back(Span("user_annotation", "ProfilerStep#" + std::to_string(s + 1), 1, t0, kStepUs));
    events.push_back(Span("cpu_op", "aten::mm", 1, t0 + 10, 40,
                          {{"Input Dims", {{kN, kN}, {kN, kN}}}, {"Input type", {"c10::BFloat16", "c10::BFloat16"}}}));
    events.push_back(Span("cuda_runtime", "cudaLaunchKernel", 1, t0 + 20, 5, {{"correlation", corr}, {"cbid", 211}}));
    events.push_back(Span("kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1",
                          7, t0 + 100, kMatmulUs, {{"correlation", corr}, {"device", 0}, {"stream", 7}}));
    ++corr;
    events.push_back(Span("cpu_op", "aten::add", 1, t0 + 60, 20,
                          {{"Input Dims", {{4096, 4096}, {4096, 4096}, json::array()}},
                           {"Input type", {"float", "float", "Scalar"}}}));
    events.push_back(Span("cuda_runtime", "cudaLaunchKernel", 1, t0 + 65, 5, {{"correlation", corr}, {"cbid", 211}}));
    events.push_back(Span("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
                          7, t0 + 100 + kMatmulUs, kAddUs, {{"correlation", corr}, {"device", 0}, {"stream", 7}}));
    ++corr;
  }
  return json{{"schemaVersion", 1},
              {"deviceProperties", {{{"id", 0}, {"name", "NVIDIA H100 80GB HBM3"}, {"totalGlobalMem", 85029158912ull}}}},
              {"traceEvents", events}}
      .dump();
}

std::vector<analysis::StepAnalysis> Analyze(const importers::KinetoTrace& t) {
  std::map<uint64_t, std::vector<analysis::StepAnalysis>> job;
  job[1] = analysis::AnalyzeProcessSteps(analysis::CutIntoImportBatches(t.events), t.strings, 1);
  analysis::JobProcess p{1, 0, 1, 0, "host", t.events.size()};
  p.device_name = t.identity.devices(0).name();
  p.device_memory_bytes = t.identity.devices(0).global_memory_bytes();
  analysis::AnalyzeJobSteps("j", {p}, &job);
  return job[1];
}

void ExpectTheConstructedFloor(const std::vector<analysis::StepAnalysis>& steps) {
  ASSERT_EQ(steps.size(), static_cast<size_t>(kSteps));
  const double flops = 2.0 * kN * kN * kN;                // 1.0995e12
  const double add_bytes = 3.0 * 4 * 4096 * 4096;           // two reads and a write
  const int64_t matmul_roofline = std::llround(flops / 989e12 * 1e9);
  const int64_t add_roofline = std::llround(add_bytes / 3350e9 * 1e9);
  for (const analysis::StepAnalysis& s : steps) {
    const v1::StepFloor& f = s.report.floor();
    SCOPED_TRACE(s.report.step().number());
    ASSERT_EQ(f.work_size(), 2);
    EXPECT_EQ(f.device(), "NVIDIA H100 80GB HBM3");
    EXPECT_TRUE(f.device_known());
    EXPECT_EQ(f.work(0).kind(), v1::WORK_KIND_MATMUL_TENSOR);
    EXPECT_EQ(f.work(0).dtype(), "bf16");
    EXPECT_EQ(f.flops(), static_cast<uint64_t>(flops));
    EXPECT_NEAR(f.work(0).flops_fraction(), flops / (kMatmulUs * 1e-6) / 989e12, 1e-9);  // 44.5%
    EXPECT_EQ(f.work(0).roofline_ns(), matmul_roofline);
    EXPECT_EQ(f.work(1).bytes(), static_cast<uint64_t>(add_bytes));
    EXPECT_EQ(f.work(1).roofline_ns(), add_roofline);
    EXPECT_EQ(f.floor_ns(), matmul_roofline + add_roofline) << "every kernel is covered";
    EXPECT_NEAR(f.mfu(), flops / (kStepUs * 1e-6 * 989e12), 1e-9);  // 22.2%
  }
}

TEST(KnownFlopsTrace, FloorAndMfuAreTheConstructions) {
  absl::StatusOr<importers::KinetoTrace> t = importers::ParseKinetoTrace(ConstructedTrace());
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectTheConstructedFloor(Analyze(*t));
}

TEST(KnownFlopsTrace, AnExportReadBackGivesTheSameFloor) {
  absl::StatusOr<importers::KinetoTrace> t = importers::ParseKinetoTrace(ConstructedTrace());
  ASSERT_TRUE(t.ok()) << t.status();
  exporters::ExportedProcess p;
  p.process_id = 1;
  p.identity = t->identity;
  ToExpandedEvents(t->events, t->strings, &p.events);
  exporters::ExportStats stats;
  const std::string exported = exporters::ChromeTraceJson({p}, &stats);
  absl::StatusOr<importers::KinetoTrace> back = importers::ParseKinetoTrace(exported);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->events.op_works.size(), t->events.op_works.size());
  ExpectTheConstructedFloor(Analyze(*back));
}

TEST(KnownFlopsTrace, WithoutShapesTheStepsSayWhichFlagGivesThem) {
  std::string text = ConstructedTrace();
  json doc = json::parse(text);
  for (json& e : doc["traceEvents"]) e["args"].erase("Input Dims");
  absl::StatusOr<importers::KinetoTrace> t = importers::ParseKinetoTrace(doc.dump());
  ASSERT_TRUE(t.ok()) << t.status();
  for (const analysis::StepAnalysis& s : Analyze(*t)) {
    EXPECT_EQ(s.report.floor().work_size(), 0);
    ASSERT_EQ(s.report.floor().notes_size(), 1);
    EXPECT_NE(s.report.floor().notes(0).find("record_shapes=True"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpuspy
