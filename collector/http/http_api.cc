#include "collector/http/http_api.h"

#include <functional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "collector/http/api_routes.h"
#include "collector/http/http_reply.h"
#include "collector/http/query_params.h"
#include "collector/http/request_framing.h"
#include "collector/http/web_ui.h"
#include "httplib.h"

namespace gpuspy::collector {
namespace {

// The route's handler as httplib calls it. Handlers get the query as ParseQuery reads it, not
// httplib's req.params (whose parser cut `process=1 OR 1=1` down to process=1: query_params.h).
httplib::Server::Handler Bind(const ApiRoute& route, QueryEngine* engine) {
  return [handler = route.handler, reads_query = route.reads_query, engine](
             const httplib::Request& req, httplib::Response& res) {
    static const QueryParams kNoQuery;
    if (!reads_query) return handler(RouteRequest{engine, req, kNoQuery}, res);
    absl::StatusOr<QueryParams> params = ParseQuery(req.target);
    if (!params.ok()) return ErrorReply(res, 400, std::string(params.status().message()));
    handler(RouteRequest{engine, req, *params}, res);
  };
}

void Register(httplib::Server& s, const ApiRoute& route, QueryEngine* engine) {
  switch (route.method) {
    case HttpMethod::kGet: s.Get(route.pattern, Bind(route, engine)); break;
    case HttpMethod::kPost: s.Post(route.pattern, Bind(route, engine)); break;
    case HttpMethod::kDelete: s.Delete(route.pattern, Bind(route, engine)); break;
  }
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
      ErrorReply(res, 400, std::string(framing.message()));
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

  for (const ApiRoute& route : ApiRoutes()) Register(s, route, engine);
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
