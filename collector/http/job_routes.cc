// Reading one job. Each handler: parameters -> request (query_params.h) -> one QueryEngine call
// -> the answer rendered, its status mapped.
#include <memory>

#include "absl/strings/str_cat.h"
#include "collector/http/api_routes.h"
#include "collector/http/http_reply.h"
#include "collector/http/timeline_json.h"
#include "collector/http/trace_export.h"
#include "httplib.h"

namespace gpuspy::collector {

void StepsRoute(const RouteRequest& request, httplib::Response& res) {
  absl::StatusOr<v1::ListStepsRequest> r = StepsQuery(request.job(), request.params);
  if (!r.ok()) return ErrorReply(res, 400, std::string(r.status().message()));
  JsonReply(res, ToJson(request.engine->ListSteps(*r)));
}

void ReportRoute(const RouteRequest& request, httplib::Response& res) {
  absl::StatusOr<v1::GetStepReportRequest> r = ReportQuery(request.job(), request.params);
  if (!r.ok()) return ErrorReply(res, 400, std::string(r.status().message()));
  JsonReply(res, ToJson(request.engine->GetStepReport(*r)));
}

void SummaryRoute(const RouteRequest& request, httplib::Response& res) {
  if (absl::Status st = CheckRoute(request.job(), request.params, {}); !st.ok()) {
    return ErrorReply(res, 400, std::string(st.message()));
  }
  v1::GetJobSummaryRequest r;
  r.set_job_id(request.job());
  JsonReply(res, ToJson(request.engine->GetJobSummary(r)));
}

void EventsRoute(const RouteRequest& request, httplib::Response& res) {
  absl::StatusOr<v1::GetEventsRequest> r = EventsQuery(request.job(), request.params);
  if (!r.ok()) return ErrorReply(res, 400, std::string(r.status().message()));
  JsonReply(res, ToJson(request.engine->GetEvents(*r)));
}

void TimelineRoute(const RouteRequest& request, httplib::Response& res) {
  if (absl::Status st = CheckRoute(request.job(), {}, {}); !st.ok()) {
    return ErrorReply(res, 400, std::string(st.message()));
  }
  absl::StatusOr<TimelineQuery> q = ParseTimelineQuery(request.params);
  if (!q.ok()) return ErrorReply(res, 400, std::string(q.status().message()));
  v1::GetStepTimelineRequest r;
  r.set_job_id(request.job());
  r.set_process_id(q->process_id);
  r.set_step(q->step);
  absl::StatusOr<v1::GetStepTimelineResponse> timeline = request.engine->GetStepTimeline(r);
  if (!timeline.ok()) return ErrorReply(res, timeline.status());
  JsonReply(res, TimelineJson(timeline->timeline()));
}

void TraceRoute(const RouteRequest& request, httplib::Response& res) {
  const std::string job = request.job();
  if (absl::Status st = CheckRoute(job, {}, {}); !st.ok()) {
    return ErrorReply(res, 400, std::string(st.message()));
  }
  absl::StatusOr<TraceQuery> q = ParseTraceQuery(request.params);
  if (!q.ok()) return ErrorReply(res, 400, std::string(q.status().message()));
  absl::StatusOr<TraceExportPlan> plan = PlanTraceExport(request.engine, job, *q);
  if (!plan.ok()) return ErrorReply(res, plan.status());
  res.set_header("Content-Disposition",
                 absl::StrCat("attachment; filename=\"", TraceFileName(job, request.params), "\""));
  // Chunked, written as the events are read (trace_export.h); a failure part way closes the
  // connection without the last chunk, so the client sees a cut download, not a short trace.
  res.set_chunked_content_provider(
      "application/json",
      [engine = request.engine, plan = std::make_shared<TraceExportPlan>(*std::move(plan))](
          size_t, httplib::DataSink& sink) {
        const absl::Status st = WriteTraceExport(engine, plan.get(), [&sink](std::string_view piece) {
          return sink.write(piece.data(), piece.size());
        });
        if (st.ok()) sink.done();
        return st.ok();
      });
}

}  // namespace gpuspy::collector
