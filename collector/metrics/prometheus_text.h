// Prometheus text exposition format (version 0.0.4), written by hand: no client library is among
// the project's dependencies and the format is a few lines of rules (HELP/TYPE once per family,
// label values escaped).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpuspy::collector {

using Labels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
 public:
  // Starts a metric family; `type` is "counter" or "gauge".
  void Family(const std::string& name, const std::string& type, const std::string& help);
  // A sample of the current family.
  void Sample(double value, const Labels& labels = {});
  const std::string& text() const { return out_; }

 private:
  std::string out_;
  std::string family_;
};

// Escapes a label value: backslash, double quote and newline.
std::string EscapeLabelValue(const std::string& value);

}  // namespace gpuspy::collector
