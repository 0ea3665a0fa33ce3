#include "importers/kineto/skip_reasons.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "importers/kineto/absl_view.h"
#include "importers/kineto/bounded_strings.h"

namespace gpuspy::importers {
std::string DescribeSkipReason(std::string_view key) {
  // Event phases other than complete ("X") events (kineto_mapping.cc counts them "phase <ph>").
  // Flows draw the trace viewer's launch-to-kernel (ac2g) and forward-to-backward (fwdbwd) arrows:
  // gpuspy links a launch to its kernel by correlation id instead.
  if (key == "phase s") return "flow arrow starts (ph 's': the trace viewer's launch-to-kernel and forward-to-backward arrows)";
  if (key == "phase f") return "flow arrow ends (ph 'f': the same arrows; launches and kernels are linked by correlation id)";
  if (key == "phase t") return "flow arrow steps (ph 't')";
  if (key == "phase M") return "metadata (ph 'M': process and thread names, sort order)";
  if (key == "phase i" || key == "phase I") {
    return "instant markers (ph 'i': 'Iteration Start', 'Record Window End'; the allocator's "
           "[memory] samples are kept)";
  }
  if (key == "phase C") return "counter samples (ph 'C')";
  if (key == "phase b" || key == "phase e" || key == "phase n") {
    return absl::StrCat("async events (ph '", AbslView(key.substr(6)), "')");
  }
  if (absl::StartsWith(AbslView(key), "phase ")) {
    return absl::StrCat("events of phase '", AbslView(key.substr(6)), "', which gpuspy does not read");
  }
  if (key == "no phase") return "events without a phase (ph)";
  if (key == "gpu_user_annotation") {
    return "GPU-timeline copies of record_function ranges (gpu_user_annotation: the same ranges "
           "are kept from the CPU side, user_annotation)";
  }
  if (key == "no category") return "complete events without a category (cat)";
  if (key == "bad timestamp") return "events whose ts or dur is not a number";
  if (key == "negative duration") return "events with a negative duration";
  if (absl::StartsWith(AbslView(key), "duplicate ")) {
    return absl::StrCat(AbslView(key.substr(10)), "s identical to one already read (a GPU record written twice "
                        "would count its time twice)");
  }
  // A category the mapping does not know ("ac2g" with ph 'X', "overhead", a newer profiler's).
  if (key.find(' ') == std::string_view::npos) {
    return absl::StrCat("complete events of category '", AbslView(key), "', which gpuspy does not map");
  }
  return std::string(key);
}

std::vector<SkipReason> SkipReasons(const std::map<std::string, uint64_t>& skipped) {
  std::vector<SkipReason> out;
  for (const auto& [key, n] : skipped) out.push_back({key, DescribeSkipReason(key), n});
  std::stable_sort(out.begin(), out.end(), [](const SkipReason& a, const SkipReason& b) { return a.events > b.events; });
  return out;
}

std::string CutStringsLine(std::string_view path, uint64_t cut_strings) {
  return absl::StrCat(AbslView(path), ": ", cut_strings, cut_strings == 1 ? " event's name" : " events' names",
                      " longer than ", kMaxStringBytes >> 10, " KiB cut to that length (ending \"",
                      AbslView(kCutMarker), "\": gpuspyd keeps no longer strings)");
}

}  // namespace gpuspy::importers
