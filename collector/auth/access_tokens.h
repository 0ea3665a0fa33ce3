// The bearer tokens gpuspyd accepts and what each one may do.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuspy::collector {

enum class TokenRole {
  kNone,     // no token matched
  kIngest,   // ingest + query (--token-file)
  kControl,  // attach/detach + query (--control-token-file)
};

class AccessTokens {
 public:
  // Shorter tokens are refused: they could be guessed.
  static constexpr size_t kMinTokenBytes = 16;

  AccessTokens() = default;
  // Either path may be empty. Errors name the file (never the token).
  static absl::StatusOr<AccessTokens> Load(const std::string& token_file,
                                           const std::string& control_token_file);
  static absl::StatusOr<AccessTokens> FromValues(std::string ingest, std::string control);

  bool configured() const { return !ingest_.empty() || !control_.empty(); }
  bool has_control_token() const { return !control_.empty(); }
  // Compares in time independent of where `presented` differs from a token.
  TokenRole Match(std::string_view presented) const;

 private:
  std::string ingest_;
  std::string control_;
};

// Equal, in time that depends only on the lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// "Bearer <token>" -> "<token>"; anything else -> "".
std::string_view BearerToken(std::string_view authorization_header);

}  // namespace gpuspy::collector
