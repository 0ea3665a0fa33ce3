#include "collector/http/request_framing.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpuspy::collector {

absl::Status CheckRequestFraming(const httplib::Request& req) {
  for (const auto& [name, value] : req.headers) {
    if (name.empty() || name.find_first_of(" \t") != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed header name '", name, "' (no whitespace before the colon)"));
    }
  }
  const size_t lengths = req.get_header_value_count("Content-Length");
  const size_t encodings = req.get_header_value_count("Transfer-Encoding");
  if (lengths > 0 && encodings > 0) {
    return absl::InvalidArgumentError("both Transfer-Encoding and Content-Length");
  }
  if (lengths > 1) return absl::InvalidArgumentError("more than one Content-Length");
  uint64_t length = 0;
  if (lengths == 1 && !absl::SimpleAtoi(req.get_header_value("Content-Length"), &length)) {
    return absl::InvalidArgumentError("Content-Length is not a number");
  }
  if (encodings > 1 ||
      (encodings == 1 && !absl::EqualsIgnoreCase(
                             absl::StripAsciiWhitespace(req.get_header_value("Transfer-Encoding")),
                             "chunked"))) {
    return absl::InvalidArgumentError("Transfer-Encoding other than chunked");
  }
  return absl::OkStatus();
}

}  // namespace gpuspy::collector
