#include "analysis/detector_names.h"

namespace gpuspy::analysis {
namespace {

const std::string& NameOr(const google::protobuf::EnumDescriptor* d, int number) {
  static const std::string kEmpty;
  if (number == 0) return kEmpty;  // the unset value names no detector/severity
  const auto* v = d->FindValueByNumber(number);
  return v != nullptr ? v->name() : kEmpty;
}

std::optional<int> Parse(const google::protobuf::EnumDescriptor* d, std::string_view name) {
  const auto* v = d->FindValueByName(std::string(name));
  if (v == nullptr || v->number() == 0) return std::nullopt;
  return v->number();
}

}  // namespace

const std::string& DetectorName(v1::Detector detector) {
  return NameOr(v1::Detector_descriptor(), detector);
}

std::optional<v1::Detector> ParseDetector(std::string_view name) {
  const std::optional<int> n = Parse(v1::Detector_descriptor(), name);
  if (!n) return std::nullopt;
  return static_cast<v1::Detector>(*n);
}

const std::string& SeverityName(v1::Severity severity) {
  return NameOr(v1::Severity_descriptor(), severity);
}

std::optional<v1::Severity> ParseSeverity(std::string_view name) {
  const std::optional<int> n = Parse(v1::Severity_descriptor(), name);
  if (!n) return std::nullopt;
  return static_cast<v1::Severity>(*n);
}

}  // namespace gpuspy::analysis
