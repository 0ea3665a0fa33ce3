// Finds training/inference steps in a process's events.
//
// Today: NVTX ranges whose message matches a step pattern (PyTorch's profiler and
// torch.cuda.nvtx users emit "ProfilerStep#N"). Period detection and fixed windows for jobs
// without NVTX come with the analysis engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// The default step pattern; group 1, when present, is the step number.
inline constexpr char kDefaultStepPattern[] = R"(ProfilerStep#(\d+))";

// A step pattern is at most this long (a regex, not a document).
inline constexpr size_t kMaxStepPatternBytes = 4096;

// OK when `pattern` is a usable step pattern (RE2, at most kMaxStepPatternBytes); else
// InvalidArgument, one line naming it and RE2's reason: "step pattern 'train_(' is not a valid
// RE2 regex: missing ): train_(". The CLI checks with it before sending, gpuspyd before storing.
absl::Status CheckStepPattern(const std::string& pattern);

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
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  bool valid_ = false;
};

}  // namespace gpuspy::analysis
