// The HTTP port's gate: tokens by header or cookie, the viewer's login, and the no-token rules.
#include "collector/auth/http_gate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "httplib.h"

namespace gpuspy::collector {
namespace {

const std::string kToken = "http-token-0123456789abcdef";

httplib::Request Get(const std::string& path, const std::string& remote = "10.1.2.3") {
  httplib::Request req;
  req.method = "GET";
  req.path = path;
  req.remote_addr = remote;
  req.remote_port = 40000;
  req.local_addr = "10.1.2.4";
  req.local_port = 7071;
  return req;
}

class HttpGateTest : public ::testing::Test {
 protected:
  HttpGateTest() : tokens_(*AccessTokens::FromValues(kToken, "")) {}
  HttpGate Gate(bool with_tokens, bool allow_remote = false) {
    return HttpGate(AccessConfig{.tokens = with_tokens ? &tokens_ : &none_,
                                 .owner_uid = static_cast<uint32_t>(geteuid()),
                                 .insecure_allow_remote = allow_remote},
                    /*tls=*/false);
  }
  AccessTokens tokens_;
  AccessTokens none_;
};

TEST_F(HttpGateTest, NoTokenIs401WithJsonForTheApi) {
  httplib::Response res;
  EXPECT_FALSE(Gate(true).Admit(Get("/api/jobs"), res));
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(res.get_header_value("Content-Type"), "application/json");
  EXPECT_NE(res.body.find("\"error\""), std::string::npos);
  EXPECT_EQ(res.get_header_value("WWW-Authenticate"), "Bearer realm=\"gpuspyd\"");
}

TEST_F(HttpGateTest, BearerHeaderOrCookieLetsIn) {
  httplib::Request req = Get("/api/jobs");
  req.headers.emplace("Authorization", "Bearer " + kToken);
  httplib::Response res;
  EXPECT_TRUE(Gate(true).Admit(req, res));

  httplib::Request cookie = Get("/metrics");
  cookie.headers.emplace("Cookie", "theme=dark; gpuspy_token=" + kToken);
  EXPECT_TRUE(Gate(true).Admit(cookie, res));
}

TEST_F(HttpGateTest, WrongTokenIs401) {
  for (const std::string& header : {std::string("Authorization"), std::string("Cookie")}) {
    httplib::Request req = Get("/api/jobs");
    req.headers.emplace(header, header == "Cookie" ? "gpuspy_token=wrong" : "Bearer wrong");
    httplib::Response res;
    EXPECT_FALSE(Gate(true).Admit(req, res));
    EXPECT_EQ(res.status, 401);
  }
  httplib::Request malformed = Get("/api/jobs");
  malformed.headers.emplace("Authorization", "Basic Zm9vOmJhcg==");
  httplib::Response res;
  EXPECT_FALSE(Gate(true).Admit(malformed, res));
  EXPECT_EQ(res.status, 401);
}

TEST_F(HttpGateTest, LoginTradesTheTokenForACookieAndRedirects) {
  httplib::Request req = Get("/");
  req.params.emplace("token", kToken);
  httplib::Response res;
  EXPECT_FALSE(Gate(true).Admit(req, res));
  EXPECT_EQ(res.status, 303);
  EXPECT_EQ(res.get_header_value("Location"), "/");
  const std::string cookie = res.get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("gpuspy_token=" + kToken), std::string::npos);
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);

  httplib::Request wrong = Get("/");
  wrong.params.emplace("token", "wrong");
  httplib::Response refused;
  EXPECT_FALSE(Gate(true).Admit(wrong, refused));
  EXPECT_EQ(refused.status, 401);
}

TEST_F(HttpGateTest, WithoutTokensRemoteCallersAreRefusedUnlessAllowed) {
  httplib::Response res;
  EXPECT_FALSE(Gate(false).Admit(Get("/api/jobs"), res));
  EXPECT_EQ(res.status, 403);
  EXPECT_TRUE(Gate(false, /*allow_remote=*/true).Admit(Get("/api/jobs"), res));
}

TEST_F(HttpGateTest, WithoutTokensAForeignHostNameIsRefused) {
  httplib::Request req = Get("/api/jobs", "127.0.0.1");
  req.headers.emplace("Host", "attacker.example:7071");  // DNS rebinding
  httplib::Response res;
  EXPECT_FALSE(Gate(false).Admit(req, res));
  EXPECT_EQ(res.status, 403);
}

TEST_F(HttpGateTest, OnlyTheHealthProbeAnswersWithoutATokenFromAnywhere) {
  httplib::Response res;
  EXPECT_TRUE(Gate(true).Admit(Get("/healthz"), res));
  EXPECT_TRUE(Gate(false).Admit(Get("/healthz"), res));
  // Not a prefix or a look-alike: those are gated like everything else.
  for (const char* path : {"/healthz/../api/jobs", "/healthzz", "/api/healthz"}) {
    httplib::Response refused;
    EXPECT_FALSE(Gate(true).Admit(Get(path), refused)) << path;
    EXPECT_EQ(refused.status, 401) << path;
  }
}

TEST(HttpGateHelpersTest, Cookies) {
  EXPECT_EQ(CookieValue("a=1; gpuspy_token=xyz; b=2", "gpuspy_token"), "xyz");
  EXPECT_EQ(CookieValue("gpuspy_token_x=1", "gpuspy_token"), "");
  EXPECT_EQ(CookieValue("", "gpuspy_token"), "");
}

TEST(HttpGateHelpersTest, LoopbackHostHeaders) {
  for (const char* h : {"localhost", "LOCALHOST:7071", "127.0.0.1:7071", "[::1]:7071", "127.0.0.1"}) {
    EXPECT_TRUE(IsLoopbackHostHeader(h)) << h;
  }
  for (const char* h : {"", "example.com", "10.0.0.1:7071", "localhost.example.com", "[::1"}) {
    EXPECT_FALSE(IsLoopbackHostHeader(h)) << h;
  }
}

}  // namespace
}  // namespace gpuspy::collector
