// The HTTP API's route table (collector/http/api_routes.h): every route is registered once, and
// the gate in front of the port (collector/auth/http_gate.h) requires of each route what the
// table declares: open, a token to read, the control token to change.
#include "collector/http/api_routes.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_replace.h"
#include "collector/auth/http_gate.h"
#include "httplib.h"

namespace gpuspy::collector {
namespace {

const std::string kReadToken = "read-token-0123456789abcdef";
const std::string kControlToken = "control-token-0123456789abcdef";

const char* MethodName(HttpMethod m) {
  switch (m) {
    case HttpMethod::kGet: return "GET";
    case HttpMethod::kPost: return "POST";
    case HttpMethod::kDelete: return "DELETE";
  }
  return "?";
}

// A request the route would serve: its pattern with the {job} segment filled in.
httplib::Request RequestFor(const ApiRoute& route, const std::string& token) {
  httplib::Request req;
  req.method = MethodName(route.method);
  req.path = absl::StrReplaceAll(route.pattern, {{"([^/]+)", "bert"}});
  req.remote_addr = "10.1.2.3";
  req.remote_port = 40000;
  req.local_addr = "10.1.2.4";
  req.local_port = 7071;
  if (!token.empty()) req.set_header("Authorization", "Bearer " + token);
  return req;
}

TEST(ApiRoutes, EachMethodAndPathIsRegisteredOnce) {
  std::set<std::pair<HttpMethod, std::string>> seen;
  for (const ApiRoute& route : ApiRoutes()) {
    EXPECT_TRUE(seen.insert({route.method, route.pattern}).second) << route.pattern;
    EXPECT_NE(route.handler, nullptr) << route.pattern;
  }
  EXPECT_EQ(seen.size(), 14u);
}

TEST(ApiRoutes, TheGateRequiresWhatEachRouteDeclares) {
  AccessTokens tokens = *AccessTokens::FromValues(kReadToken, kControlToken);
  const HttpGate gate(AccessConfig{.tokens = &tokens, .owner_uid = 0, .insecure_allow_remote = false},
                      /*tls=*/false);
  auto admits = [&](const ApiRoute& route, const std::string& token) {
    httplib::Response res;
    return gate.Admit(RequestFor(route, token), res);
  };
  for (const ApiRoute& route : ApiRoutes()) {
    SCOPED_TRACE(std::string(MethodName(route.method)) + " " + route.pattern);
    EXPECT_TRUE(admits(route, kControlToken));
    switch (route.access) {
      case RouteAccess::kOpen:
        EXPECT_TRUE(admits(route, ""));
        break;
      case RouteAccess::kRead:
        EXPECT_FALSE(admits(route, ""));
        EXPECT_TRUE(admits(route, kReadToken));
        break;
      case RouteAccess::kManage:
        EXPECT_FALSE(admits(route, ""));
        EXPECT_FALSE(admits(route, kReadToken));
        break;
    }
  }
}

}  // namespace
}  // namespace gpuspy::collector
