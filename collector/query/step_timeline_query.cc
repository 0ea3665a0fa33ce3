// QueryEngine::GetStepTimeline: one step's stored columns, read once, laid out by the analysis
// (analysis/step_timeline.h) for the web viewer's timeline.
#include <shared_mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/step_timeline.h"
#include "collector/query/query_engine.h"

namespace gpuspy::collector {

absl::StatusOr<v1::GetStepTimelineResponse> QueryEngine::GetStepTimeline(
    const v1::GetStepTimelineRequest& request) {
  // Step numbers are per process: a timeline of "step 4" of every rank at once means nothing.
  if (request.process_id() == 0) {
    return absl::InvalidArgumentError("a step timeline needs process_id (step numbers are per process)");
  }
  v1::ListStepsRequest sr;
  sr.set_job_id(request.job_id());
  sr.set_process_id(request.process_id());
  absl::StatusOr<v1::ListStepsResponse> steps = ListSteps(sr);
  if (!steps.ok()) return steps.status();
  const v1::Step* found = nullptr;
  for (const v1::Step& s : steps->steps()) {
    if (s.number() == request.step()) found = &s;
  }
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat("job '", request.job_id(), "' process ",
                                            request.process_id(), " has no step ", request.step()));
  }
  v1::GetEventsRequest er;
  er.set_job_id(request.job_id());
  er.set_process_id(request.process_id());
  er.set_from_ns(found->start_ns());
  er.set_to_ns(found->end_ns());
  er.set_limit(kMaxEventLimit);
  absl::StatusOr<SelectedEvents> events = ReadEvents(er);
  if (!events.ok()) return events.status();
  if (events->processes.empty()) {
    return absl::NotFoundError(
        absl::StrCat("job '", request.job_id(), "' has no process ", request.process_id()));
  }
  // One process: its events resolve against its own dictionary, held shared while they are
  // read, as GetEvents holds it to expand them.
  const WindowEvents& step_events = events->processes.front().window;
  // Host lanes are named from the process's pid (its main thread) and the names its producer
  // gave the threads (a trace's thread_name; live capture sends none).
  analysis::HostThreads threads;
  if (absl::StatusOr<ProcessRecord> p = store_->GetProcess(request.process_id()); p.ok()) {
    threads.pid = p->identity.pid();
  }
  std::shared_lock lock(step_events.dictionary->mu);
  const ProcessDictionary& dict = step_events.dictionary->dict;
  for (const auto& [tid, name] : dict.thread_names()) threads.names[tid] = std::string(dict.strings().Get(name));
  v1::GetStepTimelineResponse out;
  *out.mutable_timeline() = analysis::BuildStepTimeline(
      step_events.events, dict.strings(), analysis::Interval{found->start_ns(), found->end_ns()},
      events->truncated, threads);
  return out;
}

}  // namespace gpuspy::collector
