#include "collector/http/http_api.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collector/http/step_timeline.h"
#include "collector/http/web_ui.h"
#include "collector/metrics/collector_metrics.h"
#include "exporters/chrome_trace/chrome_trace_writer.h"
#include "httplib.h"

namespace gpuspy::collector {
namespace {

int HttpCode(const absl::Status& st) {
  switch (st.code()) {
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kUnavailable: return 503;
    default: return 500;
  }
}

void Error(httplib::Response& res, int code, const std::string& message) {
  res.status = code;
  google::protobuf::Value v;  // only to reuse protobuf's JSON string escaping
  v.set_string_value(message);
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

// An integer query parameter; absent -> `fallback`; malformed -> InvalidArgument.
absl::StatusOr<int64_t> IntParam(const httplib::Request& req, const char* name, int64_t fallback) {
  if (!req.has_param(name)) return fallback;
  int64_t v = 0;
  const std::string text = req.get_param_value(name);
  if (!absl::SimpleAtoi(text, &v) || v < 0) {
    return absl::InvalidArgumentError(absl::StrCat("parameter ", name, "='", text,
                                                   "' is not a non-negative integer"));
  }
  return v;
}

// "<job>[-steps-A-B][-pP].trace.json", reduced to characters safe in a header and a file name.
std::string TraceFileName(const httplib::Request& req, const std::string& job) {
  std::string name = job;
  if (req.has_param("steps")) absl::StrAppend(&name, "-steps-", req.get_param_value("steps"));
  if (req.has_param("process")) absl::StrAppend(&name, "-p", req.get_param_value("process"));
  for (char& c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return name + ".trace.json";
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
  if (!options.tls_cert.empty()) {
    auto tls = std::make_unique<httplib::SSLServer>(options.tls_cert.c_str(), options.tls_key.c_str());
    if (!tls->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat("cannot serve HTTPS with ", options.tls_cert,
                                                     " and ", options.tls_key));
    }
    api->server_ = std::move(tls);
  } else {
    api->server_ = std::make_unique<httplib::Server>();
  }
  httplib::Server& s = *api->server_;
  s.set_payload_max_length(64 << 10);  // only GETs are served: a body is never needed
  if (options.admit) {
    s.set_pre_routing_handler([admit = options.admit](const httplib::Request& req, httplib::Response& res) {
      return admit(req, res) ? httplib::Server::HandlerResponse::Unhandled
                             : httplib::Server::HandlerResponse::Handled;
    });
  }
  // httplib's default also sets SO_REUSEPORT: a second daemon would then share the port silently.
  s.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });

  s.Get("/api/jobs", [engine](const httplib::Request&, httplib::Response& res) {
    Json(res, ToJson(engine->ListJobs()));
  });
  s.Get("/metrics", [engine](const httplib::Request&, httplib::Response& res) {
    res.set_content(CollectorMetrics(engine), "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Get("/api/stats", [engine](const httplib::Request&, httplib::Response& res) {
    Json(res, ToJson(absl::StatusOr<v1::GetStatsResponse>(engine->GetStats())));
  });
  s.Get(R"(/api/jobs/([^/]+)/steps)", [engine](const httplib::Request& req, httplib::Response& res) {
    absl::StatusOr<int64_t> process = IntParam(req, "process", 0);
    if (!process.ok()) return Error(res, 400, std::string(process.status().message()));
    v1::ListStepsRequest r;
    r.set_job_id(req.matches[1]);
    r.set_process_id(*process);
    Json(res, ToJson(engine->ListSteps(r)));
  });
  s.Get(R"(/api/jobs/([^/]+)/report)", [engine](const httplib::Request& req, httplib::Response& res) {
    absl::StatusOr<int64_t> process = IntParam(req, "process", 0);
    absl::StatusOr<int64_t> step = IntParam(req, "step", -1);
    absl::StatusOr<int64_t> last = IntParam(req, "last", 0);
    for (const auto* p : {&process, &step, &last}) {
      if (!p->ok()) return Error(res, 400, std::string(p->status().message()));
    }
    v1::GetStepReportRequest r;
    r.set_job_id(req.matches[1]);
    r.set_process_id(*process);
    if (req.get_param_value("all") == "1" || (*step < 0 && *last == 0)) {
      r.set_all(true);
    } else if (*step >= 0) {
      r.set_step(*step);
    } else {
      r.set_last(static_cast<uint32_t>(*last));
    }
    Json(res, ToJson(engine->GetStepReport(r)));
  });
  s.Get(R"(/api/jobs/([^/]+)/summary)", [engine](const httplib::Request& req, httplib::Response& res) {
    v1::GetJobSummaryRequest r;
    r.set_job_id(req.matches[1]);
    Json(res, ToJson(engine->GetJobSummary(r)));
  });
  s.Get(R"(/api/jobs/([^/]+)/events)", [engine](const httplib::Request& req, httplib::Response& res) {
    absl::StatusOr<int64_t> process = IntParam(req, "process", 0);
    absl::StatusOr<int64_t> from = IntParam(req, "from", 0);
    absl::StatusOr<int64_t> to = IntParam(req, "to", 0);
    absl::StatusOr<int64_t> limit = IntParam(req, "limit", 0);
    for (const auto* p : {&process, &from, &to, &limit}) {
      if (!p->ok()) return Error(res, 400, std::string(p->status().message()));
    }
    v1::GetEventsRequest r;
    r.set_job_id(req.matches[1]);
    r.set_process_id(*process);
    r.set_from_ns(*from);
    r.set_to_ns(*to);
    r.set_limit(static_cast<uint32_t>(std::min<int64_t>(*limit, std::numeric_limits<uint32_t>::max())));
    Json(res, ToJson(engine->GetEvents(r)));
  });
  s.Get(R"(/api/jobs/([^/]+)/timeline)", [engine](const httplib::Request& req, httplib::Response& res) {
    absl::StatusOr<int64_t> process = IntParam(req, "process", 0);
    absl::StatusOr<int64_t> step = IntParam(req, "step", -1);
    for (const auto* p : {&process, &step}) {
      if (!p->ok()) return Error(res, 400, std::string(p->status().message()));
    }
    // Step numbers are per process: a timeline of "step 4" of every rank at once means nothing.
    if (*process == 0 || *step < 0) return Error(res, 400, "timeline needs process=P and step=N");
    Json(res, StepTimeline(engine, req.matches[1], static_cast<uint64_t>(*process), *step));
  });
  s.Get(R"(/api/jobs/([^/]+)/trace)", [engine](const httplib::Request& req, httplib::Response& res) {
    const std::string job = req.matches[1];
    absl::StatusOr<int64_t> process = IntParam(req, "process", 0);
    if (!process.ok()) return Error(res, 400, std::string(process.status().message()));
    int64_t first = std::numeric_limits<int64_t>::min(), last = std::numeric_limits<int64_t>::max();
    if (req.has_param("steps")) {
      std::vector<std::string> parts = absl::StrSplit(req.get_param_value("steps"), '-');
      const bool ok = (parts.size() == 1 && absl::SimpleAtoi(parts[0], &first) && (last = first, true)) ||
                      (parts.size() == 2 && absl::SimpleAtoi(parts[0], &first) &&
                       absl::SimpleAtoi(parts[1], &last) && first <= last);
      if (!ok) return Error(res, 400, "steps must be N or A-B");
    }
    absl::StatusOr<v1::ListJobsResponse> jobs = engine->ListJobs();
    v1::GetStepReportRequest rr;
    rr.set_job_id(job);
    rr.set_process_id(*process);
    rr.set_all(true);
    absl::StatusOr<v1::GetStepReportResponse> reports = engine->GetStepReport(rr);
    if (!jobs.ok()) return Error(res, HttpCode(jobs.status()), std::string(jobs.status().message()));
    if (!reports.ok()) {
      return Error(res, HttpCode(reports.status()), std::string(reports.status().message()));
    }
    std::pair<int64_t, int64_t> window;
    std::vector<exporters::ExportedProcess> processes =
        exporters::AssembleExport(job, *process, first, last, *jobs, *reports, &window);
    if (req.has_param("steps") && window.second == 0) {
      return Error(res, 404, absl::StrCat("job '", job, "' has no steps in ", req.get_param_value("steps")));
    }
    v1::GetEventsRequest er;
    er.set_job_id(job);
    er.set_process_id(*process);
    if (req.has_param("steps")) {
      er.set_from_ns(window.first);
      er.set_to_ns(window.second);
    }
    er.set_limit(5'000'000);
    absl::StatusOr<v1::GetEventsResponse> events = engine->GetEvents(er);
    if (!events.ok()) return Error(res, HttpCode(events.status()), std::string(events.status().message()));
    exporters::AttachEvents(&*events, &processes);
    res.set_header("Content-Disposition", absl::StrCat("attachment; filename=\"", TraceFileName(req, job), "\""));
    res.set_content(exporters::ChromeTraceJson(processes), "application/json");
  });

  AddWebUiRoutes(&s);

  api->port_ = port == 0 ? s.bind_to_any_port(host) : (s.bind_to_port(host, port) ? port : -1);
  if (api->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on http://", address));
  }
  api->thread_ = std::thread([raw = api.get()] { raw->server_->listen_after_bind(); });
  return api;
}

void HttpApi::Stop() {
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

HttpApi::~HttpApi() { Stop(); }

}  // namespace gpuspy::collector
