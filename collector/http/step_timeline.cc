#include "collector/http/step_timeline.h"

#include "absl/strings/str_cat.h"
#include "codec/expanded_events.h"
#include "collector/analysis/idle_attribution.h"
#include "collector/http/timeline_json.h"

namespace gpuspy::collector {

absl::StatusOr<std::string> StepTimeline(QueryEngine* engine, const std::string& job_id,
                                         uint64_t process_id, int64_t step) {
  v1::ListStepsRequest sr;
  sr.set_job_id(job_id);
  sr.set_process_id(process_id);
  absl::StatusOr<v1::ListStepsResponse> steps = engine->ListSteps(sr);
  if (!steps.ok()) return steps.status();
  const v1::Step* found = nullptr;
  for (const v1::Step& s : steps->steps()) {
    if (s.number() == step) found = &s;
  }
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat("job '", job_id, "' process ", process_id, " has no step ", step));
  }
  v1::GetEventsRequest er;
  er.set_job_id(job_id);
  er.set_process_id(process_id);
  er.set_from_ns(found->start_ns());
  er.set_to_ns(found->end_ns());
  er.set_limit(kMaxEventLimit);
  absl::StatusOr<v1::GetEventsResponse> events = engine->GetEvents(er);
  if (!events.ok()) return events.status();

  EventColumns columns;
  StringTable strings;
  for (const v1::ProcessEvents& p : events->processes()) {
    for (const v1::Event& e : p.events()) FromExpandedEvent(e, &strings, &columns);
  }
  const analysis::Interval window{found->start_ns(), found->end_ns()};
  const analysis::IdleAttribution idle = analysis::AttributeIdle(columns, strings, window);
  return TimelineJson(columns, strings, window, idle, events->truncated());
}

}  // namespace gpuspy::collector
