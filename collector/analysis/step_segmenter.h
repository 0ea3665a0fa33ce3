// Finds training/inference steps in a process's events.
//
// Today: NVTX ranges whose message matches a step pattern (PyTorch's profiler and
// torch.cuda.nvtx users emit "ProfilerStep#N"). Period detection and fixed windows for jobs
// without NVTX come with the analysis engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// The default step pattern; group 1, when present, is the step number.
inline constexpr char kDefaultStepPattern[] = R"(ProfilerStep#(\d+))";

struct StepWindow {
  int64_t number = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::string source;  // "nvtx:<pattern>"
  friend bool operator==(const StepWindow&, const StepWindow&) = default;
};

class StepSegmenter {
 public:
  // `pattern` is an RE2 regex matched against the whole range message.
  explicit StepSegmenter(const std::string& pattern = kDefaultStepPattern);

  // Steps found among `events.nvtx_ranges`, ordered by start. Ranges matching without a
  // numeric group are numbered by order of appearance starting at `first_ordinal`.
  std::vector<StepWindow> FindSteps(const EventColumns& events, const StringTable& strings,
                                    int64_t first_ordinal = 0) const;

  bool valid() const { return valid_; }

 private:
  std::string pattern_;
  bool valid_ = false;
};

}  // namespace gpuspy::analysis
