// Access control for gpuspyd's HTTP port (API, web viewer, /metrics), run before routing.
//
// With tokens configured every request needs one: "Authorization: Bearer <token>", or the
// gpuspy_token cookie the web viewer gets by opening /?token=<token> once (it is then sent back
// to / without the token in the address). Either token allows reading; deleting and renaming jobs
// (DELETE, POST) needs the control token, and a request whose Origin is another site is refused.
// Without tokens the port is loopback-only and serves gpuspyd's own uid and root (found from the
// socket table), and only under a loopback Host name (a web page cannot rebind its name to
// 127.0.0.1 and read the API through the user's browser).
#pragma once

#include <cstdint>
#include <string>

#include "collector/auth/access_policy.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace gpuspy::collector {

inline constexpr char kTokenCookie[] = "gpuspy_token";

class HttpGate {
 public:
  HttpGate(AccessConfig config, bool tls) : config_(config), tls_(tls) {}
  // True: serve the request. False: `res` holds the answer (a refusal, or the login redirect).
  bool Admit(const httplib::Request& req, httplib::Response& res) const;

 private:
  AccessConfig config_;
  bool tls_;
};

// The value of cookie `name` in a Cookie header, "" if absent.
std::string CookieValue(const std::string& cookie_header, const std::string& name);

// True when a Host header names a loopback address or "localhost" (with or without a port).
bool IsLoopbackHostHeader(const std::string& host);

}  // namespace gpuspy::collector
