// The collector's HTTP/JSON API (for the web viewer and scripts): the Query service's answers as
// JSON, plus the trace export, and the web viewer itself (web_ui.h). The routes are a table
// (api_routes.h, where they are listed), registered in one loop; their handlers only parse
// parameters, call QueryEngine (or one helper), render the answer and map its status
// (http_reply.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "collector/http/guarded_server.h"
#include "collector/query/query_engine.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace gpuspy::collector {

struct HttpApiOptions {
  std::string tls_cert;  // PEM files; both set: HTTPS
  std::string tls_key;
  // Runs before routing (collector/auth/http_gate.h): false = refused, `res` holds the answer.
  std::function<bool(const httplib::Request&, httplib::Response&)> admit;
  // Caps and deadlines against slow or abusive clients (guarded_server.h).
  ConnectionPolicy connections;
};

class HttpApi {
 public:
  // Binds `address` ("host:port", port 0 = any free port) and serves on its own thread.
  static absl::StatusOr<std::unique_ptr<HttpApi>> Start(QueryEngine* engine, const std::string& address,
                                                        const HttpApiOptions& options = {});
  ~HttpApi();
  void Stop();
  int port() const { return port_; }
  // Connections open now, and refused for being over a cap since the start.
  size_t open_connections() const { return limiter_->open(); }
  uint64_t refused_connections() const { return limiter_->refused(); }

 private:
  HttpApi() = default;
  std::unique_ptr<httplib::Server> server_;  // a GuardedServer
  ConnectionLimiter* limiter_ = nullptr;     // server_'s
  std::function<void()> stop_all_;           // server_'s StopAll
  std::thread thread_;
  int port_ = 0;
};

}  // namespace gpuspy::collector
