#include "collector/metrics/prometheus_text.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuspy::collector {

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void PrometheusText::Family(const std::string& name, const std::string& type,
                            const std::string& help) {
  family_ = name;
  absl::StrAppend(&out_, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

void PrometheusText::Sample(double value, const Labels& labels) {
  out_ += family_;
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      absl::StrAppend(&out_, i == 0 ? "" : ",", labels[i].first, "=\"",
                      EscapeLabelValue(labels[i].second), "\"");
    }
    out_ += '}';
  }
  if (std::isnan(value)) {
    out_ += " NaN\n";
  } else if (value == std::floor(value) && std::fabs(value) < 1e15) {
    absl::StrAppend(&out_, " ", static_cast<int64_t>(value), "\n");
  } else {
    absl::StrAppend(&out_, " ", absl::StrFormat("%.9g", value), "\n");
  }
}

}  // namespace gpuspy::collector
