// Debian's abseil is built with its own string_view, not std::string_view: the importer's texts
// are std::string_view, abseil's parsers and string functions take absl::string_view.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace gpuspy::importers {

inline absl::string_view AbslView(std::string_view v) {
  return absl::string_view(v.data(), v.size());
}

}  // namespace gpuspy::importers
