// The HTTP API's query parameters (http_api.h lists the routes) turned into Query requests, apart
// from the handlers: pure functions over the parsed parameters, so they are unit-tested and
// fuzzed (tests/fuzz/http_query_fuzz.cc) without a server. Malformed values are InvalidArgument
// with a message naming the parameter (the handlers answer 400 with it).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::collector {

// Decoded query parameters; the same type as httplib::Params (a repeated key: the first counts).
using QueryParams = std::multimap<std::string, std::string>;

// The query of a request target ("/path?a=1&b=x%20y"), percent-decoded ('+' is a space). A value
// runs to the next '&': `process=1 OR 1=1` is "1 OR 1=1" (and refused as a number), where
// httplib's own parser kept the text after the last '=' and read it as process=1. Malformed
// percent-escapes -> InvalidArgument.
absl::StatusOr<QueryParams> ParseQuery(const std::string& target);

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF). Protobuf strings must be: a value that is not was echoed as '' in the 400's message,
// with a libprotobuf ERROR in the log.
bool IsValidUtf8(std::string_view text);

// The checks every route shares: the job id (from the path; "" for routes without one) and every
// parameter name and value are UTF-8, and each name is one the route takes (`known`). A
// parameter a route does not take is refused, not ignored: `summary?process=1 OR 1=1` answered
// the whole job as if the filter had applied.
absl::Status CheckRoute(const std::string& job, const QueryParams& params,
                        std::initializer_list<const char*> known);

// An integer parameter; absent -> `fallback`; not a non-negative integer -> InvalidArgument.
absl::StatusOr<int64_t> IntParam(const QueryParams& params, const std::string& name, int64_t fallback);

// /steps[?process=P]
absl::StatusOr<v1::ListStepsRequest> StepsQuery(const std::string& job, const QueryParams& params);
// /report[?step=N | ?last=K | ?all=1][&process=P]; none of step/last (or all=1) = every step.
absl::StatusOr<v1::GetStepReportRequest> ReportQuery(const std::string& job, const QueryParams& params);
// /events[?from=NS&to=NS&limit=N&process=P&cursor=C]; a limit beyond uint32 is clamped (and
// beyond a page's cap by the engine); the cursor is the previous page's next_cursor.
absl::StatusOr<v1::GetEventsRequest> EventsQuery(const std::string& job, const QueryParams& params);

// /timeline?process=P&step=N: both required (step numbers are per process).
struct TimelineQuery {
  uint64_t process_id = 0;  // > 0
  int64_t step = 0;         // >= 0
};
absl::StatusOr<TimelineQuery> ParseTimelineQuery(const QueryParams& params);

// /api/diff?a=SEL&b=SEL: each side "JOB[@RANK][:STEPS]" (analysis/diff/run_selector.h).
absl::StatusOr<v1::GetRunProfileRequest> RunProfileQuery(const std::string& selector);

// /trace[?steps=A-B|N][&process=P]
struct TraceQuery {
  uint64_t process_id = 0;  // 0 = every process of the job
  bool has_steps = false;   // false: the whole job, [first_step, last_step] = [min, max]
  int64_t first_step = 0;   // <= last_step
  int64_t last_step = 0;
  std::string steps_text;   // as given, for messages
};
absl::StatusOr<TraceQuery> ParseTraceQuery(const QueryParams& params);
// "<job>[-steps-A-B][-pP].trace.json" with every character outside [A-Za-z0-9._-] replaced by
// '_': the name goes into a Content-Disposition header and onto the user's disk.
std::string TraceFileName(const std::string& job, const QueryParams& params);

}  // namespace gpuspy::collector
