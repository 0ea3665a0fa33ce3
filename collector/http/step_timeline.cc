#include "collector/http/step_timeline.h"

#include <shared_mutex>

#include "absl/strings/str_cat.h"
#include "analysis/idle_attribution.h"
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
  absl::StatusOr<SelectedEvents> events = engine->ReadEvents(er);
  if (!events.ok()) return events.status();
  const analysis::Interval window{found->start_ns(), found->end_ns()};
  // One process (ParseTimelineQuery insists): its events resolve against its own dictionary,
  // held shared while they are read, as GetEvents holds it to expand them.
  if (events->processes.empty()) {
    return absl::NotFoundError(absl::StrCat("job '", job_id, "' has no process ", process_id));
  }
  const WindowEvents& step_events = events->processes.front().window;
  std::shared_lock lock(step_events.dictionary->mu);
  const StringTable& strings = step_events.dictionary->dict.strings();
  const analysis::IdleAttribution idle = analysis::AttributeIdle(step_events.events, strings, window);
  return TimelineJson(step_events.events, strings, window, idle, events->truncated);
}

}  // namespace gpuspy::collector
