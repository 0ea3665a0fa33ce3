// Whether a text can be a trace at all, from its first byte that is not JSON whitespace: a trace
// is a JSON object. Said before anything else about a file (what it is not, rather than what the
// parser tripped on), and before a gzip file is inflated whole: 1 GiB of gzip'd zeros was
// inflated into 1 GiB of memory only to be refused for its first byte.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace gpuspy::importers {

// JSON whitespace: the four bytes RFC 8259 allows between tokens (inline: the walk asks per token).
inline bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// InvalidArgument naming the first byte when it is neither '{' nor '[' ('[' is JSON, left to the
// traceEvents check), or saying the text is empty (whitespace only). No file name: callers add it.
absl::Status CheckStartsLikeJson(std::string_view text);

}  // namespace gpuspy::importers
