#include "collector/auth/access_tokens.h"

#include <sys/stat.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/transport/channel_security.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

absl::StatusOr<std::string> Load(const std::string& path, const char* flag) {
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> token = ReadTokenFile(path);
  if (!token.ok()) return absl::Status(token.status().code(), absl::StrCat(flag, ": ", token.status().message()));
  struct stat st;
  // Group read is allowed: that is how a Kubernetes Secret reaches a non-root container (root-owned
  // files, 0440, the pod's fsGroup). Anything for everyone, or group write, is a mistake.
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & 0027) != 0) {
    spdlog::warn("{} {} can be read or changed by other users (chmod 600 it)", flag, path);
  }
  return token;
}

}  // namespace

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string_view BearerToken(std::string_view header) {
  auto strip = [](std::string_view s) {
    while (!s.empty() && absl::ascii_isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && absl::ascii_isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  header = strip(header);
  if (header.size() < 7 || absl::AsciiStrToLower(std::string(header.substr(0, 7))) != "bearer ") return {};
  return strip(header.substr(7));
}

absl::StatusOr<AccessTokens> AccessTokens::FromValues(std::string ingest, std::string control) {
  for (const std::string* t : {&ingest, &control}) {
    if (!t->empty() && t->size() < kMinTokenBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a token must be at least ", kMinTokenBytes, " characters (e.g. openssl rand -hex 32)"));
    }
  }
  if (!ingest.empty() && ingest == control) {
    return absl::InvalidArgumentError("the control token must differ from the ingest/query token");
  }
  AccessTokens tokens;
  tokens.ingest_ = std::move(ingest);
  tokens.control_ = std::move(control);
  return tokens;
}

absl::StatusOr<AccessTokens> AccessTokens::Load(const std::string& token_file,
                                                const std::string& control_token_file) {
  absl::StatusOr<std::string> ingest = collector::Load(token_file, "--token-file");
  if (!ingest.ok()) return ingest.status();
  absl::StatusOr<std::string> control = collector::Load(control_token_file, "--control-token-file");
  if (!control.ok()) return control.status();
  return FromValues(*std::move(ingest), *std::move(control));
}

TokenRole AccessTokens::Match(std::string_view presented) const {
  if (presented.empty()) return TokenRole::kNone;
  // Both comparisons always run: which token matched does not show in the time taken.
  const bool ingest = !ingest_.empty() && ConstantTimeEquals(presented, ingest_);
  const bool control = !control_.empty() && ConstantTimeEquals(presented, control_);
  if (control) return TokenRole::kControl;
  if (ingest) return TokenRole::kIngest;
  return TokenRole::kNone;
}

}  // namespace gpuspy::collector
