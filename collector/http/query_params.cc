#include "collector/http/query_params.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/diff/run_selector.h"

namespace gpuspy::collector {
namespace {

const std::string* Find(const QueryParams& params, const std::string& name) {
  auto it = params.find(name);  // the first of equal keys, as httplib's get_param_value
  return it == params.end() ? nullptr : &it->second;
}

// The length of the UTF-8 sequence starting with `lead` (0: not a lead byte), and the smallest
// second byte allowed after it (rules out overlong forms and surrogates, RFC 3629 section 4).
struct Utf8Lead {
  int length;
  unsigned char second_min;
  unsigned char second_max;
};
Utf8Lead LeadOf(unsigned char lead) {
  if (lead < 0x80) return {1, 0, 0};
  if (lead >= 0xC2 && lead <= 0xDF) return {2, 0x80, 0xBF};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};
  if (lead == 0xED) return {3, 0x80, 0x9F};
  if (lead >= 0xE1 && lead <= 0xEF) return {3, 0x80, 0xBF};
  if (lead == 0xF0) return {4, 0x90, 0xBF};
  if (lead >= 0xF1 && lead <= 0xF3) return {4, 0x80, 0xBF};
  if (lead == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

std::string KnownList(std::initializer_list<const char*> known) {
  std::string out;
  for (const char* k : known) absl::StrAppend(&out, out.empty() ? "" : ", ", k);
  return out.empty() ? "none" : out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::StatusOr<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      const int hi = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) return absl::InvalidArgumentError("malformed percent-escape in the query");
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<QueryParams> ParseQuery(const std::string& target) {
  QueryParams out;
  const size_t question = target.find('?');
  if (question == std::string::npos) return out;
  const std::string_view query = std::string_view(target).substr(question + 1);
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view part = query.substr(start, end - start);
    if (!part.empty()) {
      const size_t eq = part.find('=');
      absl::StatusOr<std::string> name = PercentDecode(part.substr(0, eq));
      absl::StatusOr<std::string> value =
          PercentDecode(eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1));
      if (!name.ok()) return name.status();
      if (!value.ok()) return value.status();
      out.emplace(std::move(*name), std::move(*value));
    }
    start = end + 1;
  }
  return out;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Utf8Lead lead = LeadOf(static_cast<unsigned char>(text[i]));
    if (lead.length == 0 || i + static_cast<size_t>(lead.length) > text.size()) return false;
    for (int k = 1; k < lead.length; ++k) {
      const unsigned char c = static_cast<unsigned char>(text[i + static_cast<size_t>(k)]);
      const unsigned char lo = k == 1 ? lead.second_min : 0x80;
      const unsigned char hi = k == 1 ? lead.second_max : 0xBF;
      if (c < lo || c > hi) return false;
    }
    i += static_cast<size_t>(lead.length);
  }
  return true;
}

absl::Status CheckRoute(const std::string& job, const QueryParams& params,
                        std::initializer_list<const char*> known) {
  if (!IsValidUtf8(job)) return absl::InvalidArgumentError("the job id is not valid UTF-8");
  for (const auto& [name, value] : params) {
    if (!IsValidUtf8(name)) return absl::InvalidArgumentError("a parameter name is not valid UTF-8");
    if (!IsValidUtf8(value)) {
      return absl::InvalidArgumentError(absl::StrCat("parameter ", name, " is not valid UTF-8"));
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown parameter '", name,
                                                     "' (this route takes: ", KnownList(known), ")"));
    }
  }
  return absl::OkStatus();
}

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
  if (absl::Status st = CheckRoute(job, params, {"process"}); !st.ok()) return st;
  absl::StatusOr<int64_t> process = IntParam(params, "process", 0);
  if (!process.ok()) return process.status();
  v1::ListStepsRequest r;
  r.set_job_id(job);
  r.set_process_id(static_cast<uint64_t>(*process));
  return r;
}

absl::StatusOr<v1::GetStepReportRequest> ReportQuery(const std::string& job, const QueryParams& params) {
  if (absl::Status st = CheckRoute(job, params, {"process", "step", "last", "all"}); !st.ok()) return st;
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
  if (absl::Status st = CheckRoute(job, params, {"process", "from", "to", "limit", "cursor"});
      !st.ok()) {
    return st;
  }
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
  // Checked by the engine (event_cursor.h): a bad one is a 400 there.
  if (auto cursor = params.find("cursor"); cursor != params.end()) r.set_cursor(cursor->second);
  return r;
}

absl::StatusOr<TimelineQuery> ParseTimelineQuery(const QueryParams& params) {
  if (absl::Status st = CheckRoute("", params, {"process", "step"}); !st.ok()) return st;
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
  if (absl::Status st = CheckRoute("", params, {"process", "steps"}); !st.ok()) return st;
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
  absl::StatusOr<analysis::StepRange> range = analysis::ParseStepRange(*steps);
  if (!range.ok()) return range.status();
  q.first_step = range->first.value_or(q.first_step);
  q.last_step = range->last.value_or(q.last_step);
  return q;
}

absl::StatusOr<v1::GetRunProfileRequest> RunProfileQuery(const std::string& selector) {
  absl::StatusOr<analysis::RunSelector> s = analysis::ParseRunSelector(selector);
  if (!s.ok()) return s.status();
  v1::GetRunProfileRequest r;
  r.set_job_id(s->base);
  if (s->rank) r.set_rank(*s->rank);
  if (s->steps.first) r.set_first_step(*s->steps.first);
  if (s->steps.last) r.set_last_step(*s->steps.last);
  return r;
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
