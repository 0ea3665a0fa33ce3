#include "collector/http/http_api.h"

#include <functional>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "collector/http/query_params.h"
#include "collector/http/request_framing.h"
#include "collector/http/timeline_json.h"
#include "collector/http/trace_export.h"
#include "collector/http/web_ui.h"
#include "collector/metrics/collector_metrics.h"
#include "httplib.h"

namespace gpuspy::collector {
namespace {

int HttpCode(const absl::Status& st) {
  switch (st.code()) {
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition: return 409;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted: return 503;  // shed load (analysis_budget.h)
    default: return 500;
  }
}

void Error(httplib::Response& res, int code, const std::string& message) {
  res.status = code;
  google::protobuf::Value v;  // only to reuse protobuf's JSON string escaping
  std::string text = message;
  // Protobuf prints a string that is not UTF-8 as '' and logs an ERROR; CheckRoute keeps such
  // bytes out of messages, this keeps any that slip through readable.
  if (!IsValidUtf8(text)) {
    for (char& c : text) {
      if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    }
  }
  v.set_string_value(text);
  std::string quoted;
  (void)google::protobuf::util::MessageToJsonString(v, &quoted);
  res.set_content(absl::StrCat("{\"error\": ", quoted, "}\n"), "application/json");
}

void Json(httplib::Response& res, const absl::StatusOr<std::string>& body) {
  if (!body.ok()) {
    Error(res, HttpCode(body.status()), std::string(body.status().message()));
    return;
  }
  res.set_content(*body, "application/json");
}

template <typename Message>
absl::StatusOr<std::string> ToJson(const absl::StatusOr<Message>& m) {
  if (!m.ok()) return m.status();
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  auto st = google::protobuf::util::MessageToJsonString(*m, &out, options);
  if (!st.ok()) return absl::InternalError(std::string(st.message()));
  return out;
}

// The API's handlers get the query as ParseQuery reads it, not httplib's req.params (whose
// parser cut `process=1 OR 1=1` down to process=1: query_params.h).
using QueryHandler =
    std::function<void(const httplib::Request&, const QueryParams&, httplib::Response&)>;
httplib::Server::Handler WithQuery(QueryHandler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    absl::StatusOr<QueryParams> params = ParseQuery(req.target);
    if (!params.ok()) return Error(res, 400, std::string(params.status().message()));
    handler(req, *params, res);
  };
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpApi>> HttpApi::Start(QueryEngine* engine, const std::string& address,
                                                        const HttpApiOptions& options) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(absl::StrCat("--http '", address, "' is not host:port"));
  }
  const std::string host = address.substr(0, colon);
  std::unique_ptr<HttpApi> api(new HttpApi());
  std::function<void()> widen_backlog;
  auto adopt = [&](auto server) {
    api->limiter_ = &server->limiter();
    api->stop_all_ = [raw = server.get()] { raw->StopAll(); };
    widen_backlog = [raw = server.get()] { raw->WidenBacklog(); };
    api->server_ = std::move(server);
  };
  if (!options.tls_cert.empty()) {
    auto tls = std::make_unique<GuardedServer<httplib::SSLServer>>(
        options.connections, options.tls_cert.c_str(), options.tls_key.c_str());
    if (!tls->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat("cannot serve HTTPS with ", options.tls_cert,
                                                     " and ", options.tls_key));
    }
    adopt(std::move(tls));
  } else {
    adopt(std::make_unique<GuardedServer<httplib::Server>>(options.connections));
  }
  httplib::Server& s = *api->server_;
  s.set_payload_max_length(64 << 10);  // parameters travel in the query string: no body is read
  // Before anything reads a body: a request two parsers could frame differently is refused and
  // its connection closed, so what follows it is never served (request_framing.h).
  s.set_pre_routing_handler([admit = options.admit](const httplib::Request& req, httplib::Response& res) {
    if (absl::Status framing = CheckRequestFraming(req); !framing.ok()) {
      Error(res, 400, std::string(framing.message()));
      res.set_header("Connection", "close");
      CloseConnectionAfterResponse();
      return httplib::Server::HandlerResponse::Handled;
    }
    if (admit && !admit(req, res)) return httplib::Server::HandlerResponse::Handled;
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // httplib's default also sets SO_REUSEPORT: a second daemon would then share the port silently.
  s.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });

  // For load balancers and kubelet probes, which cannot carry a secret: answers without a token
  // (HttpGate) and so says nothing beyond being up.
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain; charset=utf-8");
  });
  s.Get("/api/jobs", WithQuery([engine](const httplib::Request& req, const QueryParams& params,
                                   httplib::Response& res) {
    if (absl::Status st = CheckRoute("", params, {}); !st.ok()) {
      return Error(res, 400, std::string(st.message()));
    }
    Json(res, ToJson(engine->ListJobs()));
  }));
  s.Get("/metrics", [engine](const httplib::Request&, httplib::Response& res) {
    res.set_content(CollectorMetrics(engine), "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Get("/api/stats", WithQuery([engine](const httplib::Request& req, const QueryParams& params,
                                   httplib::Response& res) {
    if (absl::Status st = CheckRoute("", params, {}); !st.ok()) {
      return Error(res, 400, std::string(st.message()));
    }
    Json(res, ToJson(absl::StatusOr<v1::GetStatsResponse>(engine->GetStats())));
  }));
  // Each handler: parameters -> request (query_params.h) -> one call -> status mapped.
  s.Get(R"(/api/jobs/([^/]+)/steps)", WithQuery([engine](const httplib::Request& req, const QueryParams& params,
                                   httplib::Response& res) {
    absl::StatusOr<v1::ListStepsRequest> r = StepsQuery(req.matches[1], params);
    if (!r.ok()) return Error(res, 400, std::string(r.status().message()));
    Json(res, ToJson(engine->ListSteps(*r)));
  }));
  s.Get(R"(/api/jobs/([^/]+)/report)", WithQuery([engine](const httplib::Request& req, const QueryParams& params,
                                   httplib::Response& res) {
    absl::StatusOr<v1::GetStepReportRequest> r = ReportQuery(req.matches[1], params);
    if (!r.ok()) return Error(res, 400, std::string(r.status().message()));
    Json(res, ToJson(engine->GetStepReport(*r)));
  }));
  s.Get(R"(/api/jobs/([^/]+)/summary)", WithQuery([engine](const httplib::Request& req, const QueryParams& params,
                                   httplib::Response& res) {
    if (absl::Status st = CheckRoute(req.matches[1], params, {}); !st.ok()) {
      return Error(res, 400, std::string(st.message()));
    }
    v1::GetJobSummaryRequest r;
    r.set_job_id(req.matches[1]);
    Json(res, ToJson(engine->GetJobSummary(r)));
  }));
  s.Get(R"(/api/jobs/([^/]+)/events)", WithQuery([engine](const httplib::Request& req, const QueryParams& params,
                                   httplib::Response& res) {
    absl::StatusOr<v1::GetEventsRequest> r = EventsQuery(req.matches[1], params);
    if (!r.ok()) return Error(res, 400, std::string(r.status().message()));
    Json(res, ToJson(engine->GetEvents(*r)));
  }));
  s.Get(R"(/api/jobs/([^/]+)/timeline)", WithQuery([engine](const httplib::Request& req, const QueryParams& params,
                                   httplib::Response& res) {
    if (absl::Status st = CheckRoute(req.matches[1], {}, {}); !st.ok()) {
      return Error(res, 400, std::string(st.message()));
    }
    absl::StatusOr<TimelineQuery> q = ParseTimelineQuery(params);
    if (!q.ok()) return Error(res, 400, std::string(q.status().message()));
    v1::GetStepTimelineRequest r;
    r.set_job_id(req.matches[1]);
    r.set_process_id(q->process_id);
    r.set_step(q->step);
    absl::StatusOr<v1::GetStepTimelineResponse> timeline = engine->GetStepTimeline(r);
    if (!timeline.ok()) return Error(res, HttpCode(timeline.status()), std::string(timeline.status().message()));
    Json(res, TimelineJson(timeline->timeline()));
  }));
  s.Get(R"(/api/jobs/([^/]+)/trace)", WithQuery([engine](const httplib::Request& req, const QueryParams& params,
                                   httplib::Response& res) {
    const std::string job = req.matches[1];
    if (absl::Status st = CheckRoute(job, {}, {}); !st.ok()) {
      return Error(res, 400, std::string(st.message()));
    }
    absl::StatusOr<TraceQuery> q = ParseTraceQuery(params);
    if (!q.ok()) return Error(res, 400, std::string(q.status().message()));
    absl::StatusOr<TraceExportPlan> plan = PlanTraceExport(engine, job, *q);
    if (!plan.ok()) return Error(res, HttpCode(plan.status()), std::string(plan.status().message()));
    res.set_header("Content-Disposition",
                   absl::StrCat("attachment; filename=\"", TraceFileName(job, params), "\""));
    // Chunked, written as the events are read (trace_export.h); a failure part way closes the
    // connection without the last chunk, so the client sees a cut download, not a short trace.
    res.set_chunked_content_provider(
        "application/json",
        [engine, plan = std::make_shared<TraceExportPlan>(*std::move(plan))](
            size_t, httplib::DataSink& sink) {
          const absl::Status st =
              WriteTraceExport(engine, plan.get(), [&sink](std::string_view piece) {
                return sink.write(piece.data(), piece.size());
              });
          if (st.ok()) sink.done();
          return st.ok();
        });
  }));

  // Changes (job_admin.h; the gate lets only the owner's or an admin's requests this far).
  s.Delete(R"(/api/jobs/([^/]+))", WithQuery([engine](const httplib::Request& req, const QueryParams& params,
                                   httplib::Response& res) {
    if (absl::Status st = CheckRoute(req.matches[1], params, {"force"}); !st.ok()) {
      return Error(res, 400, std::string(st.message()));
    }
    absl::StatusOr<int64_t> force = IntParam(params, "force", 0);
    if (!force.ok()) return Error(res, 400, std::string(force.status().message()));
    v1::DeleteJobRequest r;
    r.set_job_id(req.matches[1]);
    r.set_force(*force != 0);
    Json(res, ToJson(engine->admin()->DeleteJob(r)));
  }));
  s.Post(R"(/api/jobs/([^/]+)/rename)", WithQuery([engine](const httplib::Request& req, const QueryParams& params,
                                   httplib::Response& res) {
    if (absl::Status st = CheckRoute(req.matches[1], params, {"to"}); !st.ok()) {
      return Error(res, 400, std::string(st.message()));
    }
    auto to = params.find("to");
    if (to == params.end() || to->second.empty()) return Error(res, 400, "parameter 'to' (the new job id) is required");
    v1::RenameJobRequest r;
    r.set_job_id(req.matches[1]);
    r.set_new_job_id(to->second);
    Json(res, ToJson(engine->admin()->RenameJob(r)));
  }));

  s.Post(R"(/api/jobs/([^/]+)/step-pattern)", WithQuery([engine](const httplib::Request& req, const QueryParams& params,
                                   httplib::Response& res) {
    if (absl::Status st = CheckRoute(req.matches[1], params, {"pattern"}); !st.ok()) {
      return Error(res, 400, std::string(st.message()));
    }
    auto pattern = params.find("pattern");
    if (pattern == params.end()) {
      return Error(res, 400, "parameter 'pattern' (an RE2 regex; empty: gpuspyd's --step-pattern) is required");
    }
    v1::SetStepPatternRequest r;
    r.set_job_id(req.matches[1]);
    r.set_step_pattern(pattern->second);
    Json(res, ToJson(engine->SetStepPattern(r)));
  }));

  // Why B is slower than A: /api/diff?a=JOB[@RANK][:STEPS]&b=... (the CLI's `gpuspy diff`).
  s.Get("/api/diff", WithQuery([engine](const httplib::Request&, const QueryParams& params,
                                        httplib::Response& res) {
    if (absl::Status st = CheckRoute("", params, {"a", "b"}); !st.ok()) {
      return Error(res, 400, std::string(st.message()));
    }
    v1::DiffRunsRequest request;
    for (const char* side : {"a", "b"}) {
      auto it = params.find(side);
      if (it == params.end()) return Error(res, 400, absl::StrCat("parameter '", side, "' is required"));
      absl::StatusOr<v1::GetRunProfileRequest> r = RunProfileQuery(it->second);
      if (!r.ok()) return Error(res, 400, absl::StrCat(side, ": ", r.status().message()));
      *(side[0] == 'a' ? request.mutable_a() : request.mutable_b()) = std::move(*r);
    }
    absl::StatusOr<v1::DiffRunsResponse> diff = engine->DiffRuns(request);
    if (!diff.ok()) return Error(res, HttpCode(diff.status()), std::string(diff.status().message()));
    Json(res, ToJson(absl::StatusOr<v1::RunDiff>(std::move(*diff->mutable_diff()))));
  }));

  AddWebUiRoutes(&s);

  api->port_ = port == 0 ? s.bind_to_any_port(host) : (s.bind_to_port(host, port) ? port : -1);
  if (api->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on http://", address));
  }
  widen_backlog();
  api->thread_ = std::thread([raw = api.get()] { raw->server_->listen_after_bind(); });
  return api;
}

void HttpApi::Stop() {
  if (stop_all_) stop_all_();
  if (thread_.joinable()) thread_.join();
}

HttpApi::~HttpApi() { Stop(); }

}  // namespace gpuspy::collector
