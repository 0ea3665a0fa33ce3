// The HTML report's text forms, shared by its sections: escaping and the number formats the page
// prints (milliseconds with two decimals, as the CLI).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuspy::exporters::html {

inline std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

inline std::string Ms(int64_t ns) { return absl::StrFormat("%.2f", static_cast<double>(ns) / 1e6); }

// A share as the page prints it ("62%"), "-" of nothing.
inline std::string Pct(int64_t part, int64_t whole) {
  return whole > 0 ? absl::StrFormat("%.0f%%", 100.0 * static_cast<double>(part) / whole) : "-";
}

// A width for CSS: part of whole in percent.
inline std::string Width(int64_t part, int64_t whole) {
  return absl::StrFormat("%.3f%%", whole > 0 ? 100.0 * static_cast<double>(part) / whole : 0.0);
}

inline std::string Label(const std::map<uint64_t, std::string>& labels, uint64_t id) {
  auto it = labels.find(id);
  return it == labels.end() ? absl::StrCat("p", id) : it->second;
}

}  // namespace gpuspy::exporters::html
