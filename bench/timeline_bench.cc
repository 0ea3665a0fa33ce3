// The web timeline's answer for one large step (GET /api/jobs/{job}/timeline): the columns-level
// read (Query.GetStepTimeline, rendered as the HTTP API renders it) against the former path, which expanded every event of the step into a
// v1::Event (GetEvents) and interned it back into columns before attributing idle time.
// Usage: timeline_bench [events_per_step=100000] [repeats=10]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "codec/batch_encoder.h"
#include "codec/expanded_events.h"
#include "analysis/step_timeline.h"
#include "collector/http/timeline_json.h"
#include "collector/ingest/batch_ingestor.h"
#include "tests/support/query_engine_parts.h"
#include "tests/support/subprocess.h"

namespace gpuspy::collector {
namespace {

// The path the timeline took before the columns-level read, kept here as the baseline. Since
// GetEvents pages (issue 22) it reads a step's first page only (100,000 events / 3 MiB at most).
std::string FormerStepTimeline(QueryEngine* engine, const std::string& job, uint64_t process,
                               const v1::Step& step) {
  v1::GetEventsRequest er;
  er.set_job_id(job);
  er.set_process_id(process);
  er.set_from_ns(step.start_ns());
  er.set_to_ns(step.end_ns());
  er.set_limit(kMaxEventLimit);
  absl::StatusOr<v1::GetEventsResponse> events = engine->GetEvents(er);
  EventColumns columns;
  StringTable strings;
  for (const v1::ProcessEvents& p : events->processes()) {
    for (const v1::Event& e : p.events()) FromExpandedEvent(e, &strings, &columns);
  }
  const analysis::Interval window{step.start_ns(), step.end_ns()};
  return TimelineJson(analysis::BuildStepTimeline(columns, strings, window, events->truncated()));
}

double MedianMs(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Run(int events_per_step, int repeats) {
  testing::TempDir dir;
  testing::QueryEngineParts parts(dir.path());
  BatchIngestor ingestor(parts.store.get(), parts.dictionaries.get(), &parts.counters,
                         analysis::StepSegmenter());
  v1::ProcessIdentity id;
  id.set_process_key("bench:timeline:0");
  id.set_job_id("timeline");
  const uint64_t process = ingestor.Hello(id, 1)->process_id();

  // Three steps; the middle one is timed. Each launch: an API call and its kernel, with names as
  // long as real templated kernels'.
  StringTable strings;
  std::vector<StringRef> names;
  for (int i = 0; i < 64; ++i) {
    names.push_back(strings.Intern("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<"
                                   "at::native::BinaryFunctor<float, float, float>>(int, " +
                                   std::to_string(i) + ")"));
  }
  const StringRef launch = strings.Intern("cudaLaunchKernel");
  const StringRef domain = strings.Intern("user_annotation");
  const int64_t launches = events_per_step / 2;
  const int64_t step_ns = launches * 2'000 + 1'000'000;
  BatchEncoder encoder(&strings);
  uint64_t sequence = 0;
  uint64_t corr = 1;
  for (int s = 0; s < 3; ++s) {
    const int64_t t0 = 1'000'000'000 + s * step_ns;
    EventColumns ev;
    ev.nvtx_ranges.push_back({t0, t0 + step_ns - 1, domain,
                              strings.Intern("ProfilerStep#" + std::to_string(s)), 7, 0});
    for (int64_t i = 0; i < launches; ++i, ++corr) {
      const int64_t t = t0 + 1000 + i * 2'000;
      ev.apis.push_back({t, t + 900, corr, ApiDomain::kRuntime, 211, launch, 7, 0});
      ev.kernels.push_back({t + 1'000, t + 1'800, corr, names[static_cast<size_t>(i) % names.size()],
                            {0, 1, 7}, {}, 0});
    }
    for (const EventColumns& part : ev.Split(std::max<size_t>(1, ev.size() / 20'000))) {
      v1::EventBatch b;
      encoder.Encode(part, ++sequence, {}, &b);
      if (auto ack = ingestor.Ingest(process, b); !ack.ok()) {
        std::fprintf(stderr, "ingest: %s\n", ack.status().ToString().c_str());
        return 1;
      }
    }
  }
  std::unique_ptr<QueryEngine> engine = parts.Engine();
  v1::ListStepsRequest sr;
  sr.set_job_id("timeline");
  sr.set_process_id(process);
  absl::StatusOr<v1::ListStepsResponse> steps = engine->ListSteps(sr);
  if (!steps.ok() || steps->steps_size() < 2) {
    std::fprintf(stderr, "expected NVTX steps\n");
    return 1;
  }
  const v1::Step step = steps->steps(1);
  v1::GetStepTimelineRequest request;
  request.set_job_id("timeline");
  request.set_process_id(process);
  request.set_step(step.number());

  std::vector<double> former_ms, columns_ms;
  std::string former, columns;
  using Clock = std::chrono::steady_clock;
  for (int r = 0; r < repeats; ++r) {
    auto a = Clock::now();
    former = FormerStepTimeline(engine.get(), "timeline", process, step);
    auto b = Clock::now();
    columns = TimelineJson(engine->GetStepTimeline(request)->timeline());
    auto c = Clock::now();
    former_ms.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    columns_ms.push_back(std::chrono::duration<double, std::milli>(c - b).count());
  }
  std::printf("step %lld: %d events; JSON %zu bytes; same answer: %s\n",
              static_cast<long long>(step.number()), events_per_step, columns.size(),
              former == columns ? "yes" : "NO");
  std::printf("former (GetEvents + FromExpandedEvent): median %.1f ms\n", MedianMs(former_ms));
  std::printf("columns-level read (GetStepTimeline):   median %.1f ms\n", MedianMs(columns_ms));
  return former == columns ? 0 : 2;
}

}  // namespace
}  // namespace gpuspy::collector

int main(int argc, char** argv) {
  const int events = argc > 1 ? std::atoi(argv[1]) : 100'000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 10;
  return gpuspy::collector::Run(events, repeats);
}
