// The one place detector and severity names become text and back (proto enums Detector and
// Severity, report.proto). The names are the enums' value names, which are also what the JSON
// of the CLI and the HTTP API prints, so a text screen, a flag and the JSON always agree and a
// new detector needs no list updated by hand.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// "sync_stall", "none", ...; "" for DETECTOR_UNSPECIFIED (an unset field, as the string it
// replaced printed).
const std::string& DetectorName(v1::Detector detector);
// The detector named `name` (as DetectorName writes it); nullopt for an unknown name, "" and
// "DETECTOR_UNSPECIFIED".
std::optional<v1::Detector> ParseDetector(std::string_view name);

// "info", "warning", "critical"; "" for SEVERITY_UNSPECIFIED.
const std::string& SeverityName(v1::Severity severity);
std::optional<v1::Severity> ParseSeverity(std::string_view name);

}  // namespace gpuspy::analysis
