// What the importer's skip counts (KinetoImportStats::skipped) mean, in words a user reads: the
// keys are terse ("phase f", "gpu_user_annotation") because the mapping counts them on its hot
// path; `gpuspy import` prints the phrase. The one place that explains why an event was not kept.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpuspy::importers {

// "phase M" -> "metadata (ph 'M': process and thread names, sort order)". Unknown keys are
// returned as they are.
std::string DescribeSkipReason(std::string_view key);

struct SkipReason {
  std::string key;     // as counted: "phase f", "gpu_user_annotation", ...
  std::string phrase;  // DescribeSkipReason(key)
  uint64_t events = 0;
};

// The counts as reasons, most events first (ties by key).
std::vector<SkipReason> SkipReasons(const std::map<std::string, uint64_t>& skipped);

// "FILE: 2 events' names longer than 64 KiB cut to that length (...)": the events were kept
// (KinetoImportStats::cut_strings, bounded_strings.h).
std::string CutStringsLine(std::string_view path, uint64_t cut_strings);

}  // namespace gpuspy::importers
