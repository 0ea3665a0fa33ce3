#include "collector/auth/http_gate.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collector/auth/loopback_uid.h"
#include "httplib.h"

namespace gpuspy::collector {
namespace {

void Refuse(const httplib::Request& req, httplib::Response& res, int status, const std::string& why) {
  res.status = status;
  if (status == 401) res.set_header("WWW-Authenticate", "Bearer realm=\"gpuspyd\"");
  if (req.path.starts_with("/api/")) {
    std::string escaped;
    for (char c : why) {
      if (c == '"' || c == '\\') escaped.push_back('\\');
      escaped.push_back(c);
    }
    res.set_content(absl::StrCat("{\"error\": \"", escaped, "\"}\n"), "application/json");
  } else {
    res.set_content(why + "\n", "text/plain; charset=utf-8");
  }
}

// A browser names the page that sent a request in Origin on every cross-origin POST or DELETE (and
// on same-origin ones too); scripts and curl send none. Without tokens the HTTP port trusts the
// local user's browser by its uid, so a page on another site must not get a change through it.
bool SameOrigin(const httplib::Request& req) {
  if (!req.has_header("Origin")) return true;
  const std::string origin = req.get_header_value("Origin");
  const size_t scheme = origin.find("://");
  return scheme != std::string::npos && origin.substr(scheme + 3) == req.get_header_value("Host");
}

}  // namespace

std::string CookieValue(const std::string& header, const std::string& name) {
  for (absl::string_view part : absl::StrSplit(header, ';')) {
    part = absl::StripAsciiWhitespace(part);
    const size_t eq = part.find('=');
    if (eq != absl::string_view::npos && part.substr(0, eq) == name) return std::string(part.substr(eq + 1));
  }
  return "";
}

bool IsLoopbackHostHeader(const std::string& host) {
  std::string name = host;
  if (name.starts_with("[")) {
    const size_t close = name.find(']');
    if (close == std::string::npos) return false;
    name = name.substr(1, close - 1);
  } else if (const size_t colon = name.rfind(':'); colon != std::string::npos) {
    name = name.substr(0, colon);
  }
  return absl::AsciiStrToLower(name) == "localhost" || IsLoopbackIp(name);
}

bool HttpGate::Admit(const httplib::Request& req, httplib::Response& res) const {
  // The health probe reveals nothing (a fixed "ok") and probes cannot carry a secret.
  if (req.path == "/healthz") return true;
  const bool changes = req.method != "GET" && req.method != "HEAD";
  if (changes && !SameOrigin(req)) {
    Refuse(req, res, 403, "cross-site request refused: jobs are deleted or renamed from gpuspyd's own pages");
    return false;
  }
  const AccessTokens* tokens = config_.tokens;
  const bool configured = tokens != nullptr && tokens->configured();
  // The viewer's login: trade the token in the address for a cookie, then drop it from the address.
  if (req.has_param("token") && (req.path == "/" || req.path == "/index.html")) {
    const std::string token = req.get_param_value("token");
    if (!configured || tokens->Match(token) == TokenRole::kNone) {
      Refuse(req, res, 401, "wrong token");
      return false;
    }
    res.set_header("Set-Cookie", absl::StrCat(kTokenCookie, "=", token, "; Path=/; HttpOnly; SameSite=Strict",
                                              tls_ ? "; Secure" : ""));
    res.set_header("Location", "/");
    res.set_header("Cache-Control", "no-store");
    res.status = 303;
    return false;
  }
  std::string presented(BearerToken(req.get_header_value("Authorization")));
  if (presented.empty()) presented = CookieValue(req.get_header_value("Cookie"), kTokenCookie);
  if (!presented.empty() || req.has_header("Authorization")) {
    const TokenRole role = configured ? tokens->Match(presented) : TokenRole::kNone;
    if (role == TokenRole::kNone) {
      Refuse(req, res, 401, "wrong token");
      return false;
    }
    // Both tokens may read; changing a job (delete, rename) is Permission::kManage, the control
    // token's, as on gRPC (access_policy.h).
    if (changes && role != TokenRole::kControl) {
      Refuse(req, res, 403, "deleting or renaming a job needs the control token (gpuspyd --control-token-file)");
      return false;
    }
    return true;
  }
  if (configured) {
    Refuse(req, res, 401,
           "this gpuspyd needs a token: send 'Authorization: Bearer <token>', or open "
           "/?token=<token> once in the browser (the token is in gpuspyd's --token-file)");
    return false;
  }
  if (!IsLoopbackIp(req.remote_addr)) {
    if (config_.insecure_allow_remote) return true;
    Refuse(req, res, 403, "remote callers need a token (gpuspyd --token-file)");
    return false;
  }
  if (!IsLoopbackHostHeader(req.get_header_value("Host"))) {
    Refuse(req, res, 403, "unexpected Host header: without a token this API answers only to localhost names");
    return false;
  }
  absl::StatusOr<uint32_t> uid = LoopbackPeerUid(req.remote_addr, req.remote_port, req.local_addr, req.local_port);
  if (!uid.ok()) {
    Refuse(req, res, 403, absl::StrCat("cannot tell which local user is calling: ", uid.status().message()));
    return false;
  }
  if (*uid != 0 && *uid != config_.owner_uid) {
    Refuse(req, res, 403,
           absl::StrCat("without a token this API serves gpuspyd's own user (uid ", config_.owner_uid,
                        ") and root; you are uid ", *uid, ": use a token (gpuspyd --token-file)"));
    return false;
  }
  return true;
}

}  // namespace gpuspy::collector
