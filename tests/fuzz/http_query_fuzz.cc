// libFuzzer target: the HTTP API's query parameters (collector/http/query_params.h), decoded by
// httplib as the server does, then — when they are valid — answered by the QueryEngine over a
// store holding a small synthetic job "fuzz" (two ranks, processes 1 and 2, steps 0..3), as the
// handlers would. Input: the job path segment, a newline, the query string
// ("fuzz\nsteps=2-3&process=1").
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "codec/batch_encoder.h"
#include "collector/http/query_params.h"
#include "collector/http/trace_export.h"
#include "httplib.h"
#include "spdlog/spdlog.h"
#include "tests/fuzz/fuzz_collector.h"
#include "tests/fuzz/quiet_protobuf.h"
#include "tools/replay/synthetic_workload.h"

namespace {

using gpuspy::fuzz::FuzzCollector;
namespace collector = gpuspy::collector;
namespace v1 = gpuspy::v1;

// A few events of each kind per step (the NVTX ranges, which hold the steps, all kept): every
// valid input exports the job as JSON, and with whole synthetic steps that export alone held the
// target to ~15 inputs/s. The parameters, not the events, are what this target varies.
constexpr size_t kKeep = 6;
void Thin(gpuspy::EventColumns* e) {
  auto thin = [](auto& v) { v.resize(std::min(v.size(), kKeep)); };
  thin(e->kernels);
  thin(e->memcpys);
  thin(e->memsets);
  thin(e->syncs);
  thin(e->memory);
  thin(e->apis);
  thin(e->nvtx_marks);
  thin(e->overheads);
  thin(e->graph_launches);
  thin(e->external_correlations);
  thin(e->memory_pools);
  thin(e->collectives);
}

FuzzCollector* Populated() {
  static FuzzCollector* c = [] {
    auto* fc = new FuzzCollector();
    gpuspy::synthetic::SyntheticOptions o;
    o.scenario = gpuspy::synthetic::Scenario::kSyncStall;
    o.steps = 4;
    o.ranks = 2;
    o.job_id = "fuzz";
    for (int r = 0; r < o.ranks; ++r) {
      gpuspy::synthetic::SyntheticRank rank = gpuspy::synthetic::GenerateRank(o, r);
      const uint64_t process = fc->ingestor().Hello(rank.identity, 1)->process_id();
      gpuspy::BatchEncoder encoder(&rank.strings);
      uint64_t sequence = 0;
      for (auto& step : rank.steps) {
        Thin(&step);
        v1::EventBatch b;
        encoder.Encode(step, ++sequence, {}, &b);
        if (!fc->ingestor().Ingest(process, b).ok()) __builtin_trap();
      }
    }
    return fc;
  }();
  return c;
}

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    __builtin_trap();
  }
}

// A valid request may still name an unknown job, process or step; nothing else may go wrong.
void CheckAnswer(const absl::Status& st) {
  Check(st.ok() || absl::IsNotFound(st) || absl::IsInvalidArgument(st), "unexpected status");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  gpuspy::fuzz::QuietProtobuf();
  Populated();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  if (newline == std::string::npos) return 0;
  const std::string job = input.substr(0, newline);
  // The routes match the job as one path segment: never empty, never a '/'.
  if (job.empty() || job.find('/') != std::string::npos) return 0;
  collector::QueryParams params;
  httplib::detail::parse_query_text(input.substr(newline + 1), params);

  collector::QueryEngine& engine = Populated()->engine();
  if (auto r = collector::StepsQuery(job, params); r.ok()) {
    CheckAnswer(engine.ListSteps(*r).status());
  }
  if (auto r = collector::ReportQuery(job, params); r.ok()) {
    Check(r->all() || r->last() > 0 || r->step() >= 0, "report request selects nothing");
    CheckAnswer(engine.GetStepReport(*r).status());
  }
  if (auto r = collector::EventsQuery(job, params); r.ok()) {
    Check(r->from_ns() >= 0 && r->to_ns() >= 0, "negative event window");
    CheckAnswer(engine.GetEvents(*r).status());
  }
  if (auto q = collector::ParseTimelineQuery(params); q.ok()) {
    Check(q->process_id > 0 && q->step >= 0, "timeline without process or step");
    v1::GetStepTimelineRequest r;
    r.set_job_id(job);
    r.set_process_id(q->process_id);
    r.set_step(q->step);
    CheckAnswer(engine.GetStepTimeline(r).status());
  }
  if (auto q = collector::ParseTraceQuery(params); q.ok()) {
    Check(q->first_step <= q->last_step, "trace step range reversed");
    CheckAnswer(collector::ExportTraceJson(&engine, job, *q).status());
  }
  const std::string file = collector::TraceFileName(job, params);
  for (char c : file) {
    Check(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.',
          "unsafe character in the trace file name");
  }
  return 0;
}
