#include "collector/http/query_params.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gpuspy::collector {
namespace {

const std::string* Find(const QueryParams& params, const std::string& name) {
  auto it = params.find(name);  // the first of equal keys, as httplib's get_param_value
  return it == params.end() ? nullptr : &it->second;
}

}  // namespace

absl::StatusOr<int64_t> IntParam(const QueryParams& params, const std::string& name, int64_t fallback) {
  const std::string* text = Find(params, name);
  if (text == nullptr) return fallback;
  int64_t v = 0;
  if (!absl::SimpleAtoi(*text, &v) || v < 0) {
    return absl::InvalidArgumentError(absl::StrCat("parameter ", name, "='", *text,
                                                   "' is not a non-negative integer"));
  }
  return v;
}

absl::StatusOr<v1::ListStepsRequest> StepsQuery(const std::string& job, const QueryParams& params) {
  absl::StatusOr<int64_t> process = IntParam(params, "process", 0);
  if (!process.ok()) return process.status();
  v1::ListStepsRequest r;
  r.set_job_id(job);
  r.set_process_id(static_cast<uint64_t>(*process));
  return r;
}

absl::StatusOr<v1::GetStepReportRequest> ReportQuery(const std::string& job, const QueryParams& params) {
  absl::StatusOr<int64_t> process = IntParam(params, "process", 0);
  absl::StatusOr<int64_t> step = IntParam(params, "step", -1);
  absl::StatusOr<int64_t> last = IntParam(params, "last", 0);
  for (const auto* p : {&process, &step, &last}) {
    if (!p->ok()) return p->status();
  }
  v1::GetStepReportRequest r;
  r.set_job_id(job);
  r.set_process_id(static_cast<uint64_t>(*process));
  const std::string* all = Find(params, "all");
  if ((all != nullptr && *all == "1") || (*step < 0 && *last == 0)) {
    r.set_all(true);
  } else if (*step >= 0) {
    r.set_step(*step);
  } else {
    // A count beyond uint32 means "all of them" as much as uint32's maximum does.
    r.set_last(static_cast<uint32_t>(std::min<int64_t>(*last, std::numeric_limits<uint32_t>::max())));
  }
  return r;
}

absl::StatusOr<v1::GetEventsRequest> EventsQuery(const std::string& job, const QueryParams& params) {
  absl::StatusOr<int64_t> process = IntParam(params, "process", 0);
  absl::StatusOr<int64_t> from = IntParam(params, "from", 0);
  absl::StatusOr<int64_t> to = IntParam(params, "to", 0);
  absl::StatusOr<int64_t> limit = IntParam(params, "limit", 0);
  for (const auto* p : {&process, &from, &to, &limit}) {
    if (!p->ok()) return p->status();
  }
  v1::GetEventsRequest r;
  r.set_job_id(job);
  r.set_process_id(static_cast<uint64_t>(*process));
  r.set_from_ns(*from);
  r.set_to_ns(*to);
  r.set_limit(static_cast<uint32_t>(std::min<int64_t>(*limit, std::numeric_limits<uint32_t>::max())));
  return r;
}

absl::StatusOr<TimelineQuery> ParseTimelineQuery(const QueryParams& params) {
  absl::StatusOr<int64_t> process = IntParam(params, "process", 0);
  absl::StatusOr<int64_t> step = IntParam(params, "step", -1);
  for (const auto* p : {&process, &step}) {
    if (!p->ok()) return p->status();
  }
  // Step numbers are per process: a timeline of "step 4" of every rank at once means nothing.
  if (*process == 0 || *step < 0) {
    return absl::InvalidArgumentError("timeline needs process=P and step=N");
  }
  return TimelineQuery{static_cast<uint64_t>(*process), *step};
}

absl::StatusOr<TraceQuery> ParseTraceQuery(const QueryParams& params) {
  absl::StatusOr<int64_t> process = IntParam(params, "process", 0);
  if (!process.ok()) return process.status();
  TraceQuery q;
  q.process_id = static_cast<uint64_t>(*process);
  q.first_step = std::numeric_limits<int64_t>::min();
  q.last_step = std::numeric_limits<int64_t>::max();
  const std::string* steps = Find(params, "steps");
  if (steps == nullptr) return q;
  q.has_steps = true;
  q.steps_text = *steps;
  std::vector<std::string> parts = absl::StrSplit(*steps, '-');
  bool ok = false;
  if (parts.size() == 1) {
    ok = absl::SimpleAtoi(parts[0], &q.first_step);
    q.last_step = q.first_step;
  } else if (parts.size() == 2) {
    ok = absl::SimpleAtoi(parts[0], &q.first_step) && absl::SimpleAtoi(parts[1], &q.last_step) &&
         q.first_step <= q.last_step;
  }
  if (!ok) return absl::InvalidArgumentError("steps must be N or A-B");
  return q;
}

std::string TraceFileName(const std::string& job, const QueryParams& params) {
  std::string name = job;
  if (const std::string* steps = Find(params, "steps")) absl::StrAppend(&name, "-steps-", *steps);
  if (const std::string* process = Find(params, "process")) absl::StrAppend(&name, "-p", *process);
  for (char& c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return name + ".trace.json";
}

}  // namespace gpuspy::collector
