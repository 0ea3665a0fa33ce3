// ChromeTraceStream: the trace written piece by piece (pages of events) is the document the
// in-memory writer makes of the same events; a collective and its kernel split across two
// pieces still meet; an output that takes no more stops the stream.
#include "exporters/chrome_trace/chrome_trace_stream.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuspy::exporters {
namespace {

v1::Event Kernel(int64_t start_ns, uint64_t correlation, const std::string& name) {
  v1::Event e;
  auto* k = e.mutable_kernel();
  k->set_start_ns(start_ns);
  k->set_end_ns(start_ns + 500);
  k->set_correlation_id(correlation);
  k->set_name(name);
  k->mutable_stream()->set_stream_id(7);
  return e;
}

v1::Event Collective(uint64_t correlation) {
  v1::Event e;
  auto* c = e.mutable_collective();
  c->set_correlation_id(correlation);
  c->set_op("allreduce");
  c->set_dtype("Float");
  c->set_in_bytes(4096);
  c->set_out_bytes(4096);
  return e;
}

// Two processes: the first with a collective and kernels, the second with a step and no events.
std::vector<ExportedProcess> Job() {
  std::vector<ExportedProcess> out(2);
  out[0].process_id = 3;
  out[0].identity.set_pid(100);
  out[0].events = {Collective(2), Kernel(1'000, 1, "gemm"), Kernel(2'000, 2, "ncclKernel_AllReduce"),
                   Kernel(3'000, 3, "gemm")};
  out[1].process_id = 5;
  out[1].identity.set_pid(200);
  v1::StepReport step;
  step.mutable_step()->set_number(0);
  step.mutable_step()->set_start_ns(1'000);
  step.mutable_step()->set_end_ns(4'000);
  out[1].steps.push_back(step);
  return out;
}

// `processes`' events handed over in pieces of `piece` events, into an output taking 100 bytes
// at a time.
std::string Streamed(const std::vector<ExportedProcess>& processes, size_t piece) {
  std::string out;
  ChromeTraceStream stream([&out](std::string_view s) { out.append(s); return true; },
                           EarliestNs(processes));
  stream.Begin(processes);
  ProcessByProcess by_process(&stream, &processes);
  for (const ExportedProcess& p : processes) {
    for (size_t i = 0; i < p.events.size(); i += piece) {
      by_process.Events(p.process_id,
                        std::vector<v1::Event>(p.events.begin() + static_cast<ptrdiff_t>(i),
                                               p.events.begin() + static_cast<ptrdiff_t>(
                                                   std::min(i + piece, p.events.size()))));
    }
  }
  by_process.Finish();
  EXPECT_TRUE(stream.End());
  return out;
}

TEST(ChromeTraceStream, InPiecesItIsTheDocumentOfTheWhole) {
  const std::vector<ExportedProcess> job = Job();
  EXPECT_EQ(Streamed(job, 1), ChromeTraceJson(job));
  EXPECT_EQ(Streamed(job, 3), ChromeTraceJson(job));
}

TEST(ChromeTraceStream, ACollectiveInThePieceBeforeItsKernelStillLabelsIt) {
  std::vector<ExportedProcess> job = Job();
  // Pieces of 2: {collective, gemm}, {nccl kernel, gemm}.
  const nlohmann::json doc = nlohmann::json::parse(Streamed(job, 2));
  int labelled = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "ncclKernel_AllReduce") {
      EXPECT_EQ(e["args"]["Collective name"], "allreduce");
      ++labelled;
    }
  }
  EXPECT_EQ(labelled, 1);
}

TEST(ChromeTraceStream, AnOutputThatTakesNoMoreStopsIt) {
  const std::vector<ExportedProcess> job = Job();
  int pieces = 0;
  ChromeTraceStream stream([&pieces](std::string_view) { return ++pieces < 1; }, 0);
  stream.Begin(job);
  ProcessByProcess by_process(&stream, &job);
  for (int i = 0; i < 20'000; ++i) by_process.Events(3, job[0].events);  // past kFlushBytes
  by_process.Finish();
  EXPECT_FALSE(stream.End());
  EXPECT_FALSE(stream.ok());
  EXPECT_EQ(pieces, 1);  // nothing offered after the refusal
}

}  // namespace
}  // namespace gpuspy::exporters
