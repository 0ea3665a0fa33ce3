// ChromeTraceWriter: gpuspy events as a Chrome/Perfetto trace in Kineto's dialect — one trace
// process per profiled process, host threads for API calls, a track per CUDA stream, flow arrows
// from each launch to its kernel, and steps with their findings on a track of their own.
#include "exporters/chrome_trace/chrome_trace_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuspy::exporters {
namespace {

using nlohmann::json;

ExportedProcess OneLaunch() {
  ExportedProcess p;
  p.process_id = 1;
  p.identity.set_pid(4242);
  p.identity.set_rank(1);
  p.identity.set_world_size(2);
  p.identity.set_host("node-a");
  v1::Event api;
  auto* a = api.mutable_api();
  a->set_start_ns(1'000'000);
  a->set_end_ns(1'005'000);
  a->set_correlation_id(17);
  a->set_domain(v1::API_DOMAIN_RUNTIME);
  a->set_name("cudaLaunchKernel");
  a->set_thread_id(99);
  a->set_call_site("train.py:12 forward");
  p.events.push_back(api);
  v1::Event kernel;
  auto* k = kernel.mutable_kernel();
  k->set_start_ns(1'010'000);
  k->set_end_ns(1'030'500);
  k->set_correlation_id(17);
  k->set_name("ampere_sgemm_128x64_tn");
  k->mutable_stream()->set_device_id(0);
  k->mutable_stream()->set_stream_id(7);
  p.events.push_back(kernel);
  v1::StepReport step;
  step.mutable_step()->set_number(3);
  step.mutable_step()->set_start_ns(1'000'000);
  step.mutable_step()->set_end_ns(1'040'000);
  step.set_primary_bottleneck(v1::fp32_gemm);
  auto* f = step.add_findings();
  f->set_detector(v1::fp32_gemm);
  f->set_title("FP32 GEMMs on CUDA cores");
  f->set_severity(v1::critical);
  f->set_lost_ns(10'000);
  p.steps.push_back(step);
  return p;
}

std::vector<json> Events(const json& doc, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == ph) out.push_back(e);
  }
  return out;
}

TEST(ChromeTraceWriter, ALaunchAndItsKernelAreJoinedByAFlowOnTheirTracks) {
  ExportStats stats;
  const json doc = json::parse(ChromeTraceJson({OneLaunch()}, &stats));
  EXPECT_EQ(doc["baseTimeNanoseconds"], 1'000'000);
  EXPECT_EQ(doc["distributedInfo"]["rank"], 1);
  EXPECT_EQ(stats.trace_events, doc["traceEvents"].size());

  json api, kernel;
  for (const json& e : Events(doc, "X")) {
    if (e["cat"] == "cuda_runtime") api = e;
    if (e["cat"] == "kernel") kernel = e;
  }
  ASSERT_FALSE(api.is_null());
  ASSERT_FALSE(kernel.is_null());
  EXPECT_EQ(api["name"], "cudaLaunchKernel");
  EXPECT_EQ(api["pid"], 4242);
  EXPECT_EQ(api["tid"], 99);
  EXPECT_EQ(api["ts"], 0.0);  // µs from baseTimeNanoseconds
  EXPECT_EQ(api["args"]["call site"], "train.py:12 forward");
  EXPECT_EQ(kernel["ts"], 10.0);
  EXPECT_EQ(kernel["dur"], 20.5);  // sub-µs durations survive as fractions
  EXPECT_EQ(kernel["args"]["correlation"], 17);
  EXPECT_NE(kernel["tid"], api["tid"]);  // the stream's track, not a host thread's

  const std::vector<json> starts = Events(doc, "s"), ends = Events(doc, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(starts[0]["id"], ends[0]["id"]);
  EXPECT_EQ(starts[0]["tid"], api["tid"]);
  EXPECT_EQ(ends[0]["tid"], kernel["tid"]);
}

TEST(ChromeTraceWriter, ProcessesAndStreamsAreNamedAndStepsCarryTheirFindings) {
  const json doc = json::parse(ChromeTraceJson({OneLaunch()}));
  std::vector<std::string> names;
  for (const json& m : Events(doc, "M")) names.push_back(m["args"]["name"]);
  EXPECT_NE(std::find(names.begin(), names.end(), "rank 1 · node-a · pid 4242"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "GPU 0 stream 7"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "gpuspy steps"), names.end());
  // Host threads are named too, not left as bare numbers beside the named stream tracks.
  EXPECT_NE(std::find(names.begin(), names.end(), "thread 99"), names.end());

  json step, finding;
  for (const json& e : doc["traceEvents"]) {
    if (e["cat"] == "gpuspy_step") step = e;
    if (e["cat"] == "gpuspy_finding") finding = e;
  }
  ASSERT_FALSE(step.is_null());
  EXPECT_EQ(step["name"], "step 3 · fp32_gemm");
  ASSERT_FALSE(finding.is_null());
  EXPECT_EQ(finding["args"]["severity"], "critical");
  EXPECT_EQ(finding["args"]["lost ms"], 0.01);
}

TEST(ChromeTraceWriter, NoEventsIsStillADocument) {
  const json doc = json::parse(ChromeTraceJson({}));
  EXPECT_TRUE(doc["traceEvents"].empty());
  EXPECT_EQ(doc["baseTimeNanoseconds"], 0);
}

}  // namespace
}  // namespace gpuspy::exporters
