#include "analysis/step_segmenter.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "re2/re2.h"

namespace gpuspy::analysis {

absl::Status CheckStepPattern(const std::string& pattern) {
  if (pattern.size() > kMaxStepPatternBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("step pattern is ", pattern.size(), " bytes; at most ", kMaxStepPatternBytes));
  }
  const RE2 re(pattern, RE2::Quiet);
  if (!re.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("step pattern '", pattern, "' is not a valid RE2 regex: ", re.error()));
  }
  return absl::OkStatus();
}

StepSegmenter::StepSegmenter(const std::string& pattern) : pattern_(pattern) {
  valid_ = RE2(pattern_, RE2::Quiet).ok();
}

std::vector<StepWindow> StepSegmenter::FindSteps(const EventColumns& events,
                                                 const StringTable& strings,
                                                 int64_t first_ordinal) const {
  std::vector<StepWindow> steps;
  if (!valid_) return steps;
  // RE2: linear time whatever the user's pattern, no exceptions.
  const RE2 re(pattern_, RE2::Quiet);
  // A job has a handful of distinct range messages and millions of ranges: match each message
  // once. nullopt = not a step; -1 = a step without a number.
  absl::flat_hash_map<StringRef, std::optional<int64_t>> verdicts;
  auto verdict = [&](StringRef message) -> std::optional<int64_t> {
    auto [it, inserted] = verdicts.try_emplace(message);
    if (!inserted) return it->second;
    const std::string_view text = strings.Get(message);
    const re2::StringPiece input(text.data(), text.size());
    std::string digits;
    const bool numbered = re.NumberOfCapturingGroups() >= 1;
    if (numbered ? RE2::FullMatch(input, re, &digits) : RE2::FullMatch(input, re)) {
      int64_t number = -1;
      if (!digits.empty()) std::from_chars(digits.data(), digits.data() + digits.size(), number);
      it->second = number;
    }
    return it->second;
  };
  std::vector<const NvtxRangeEvent*> matched;
  std::vector<int64_t> numbers;
  for (const NvtxRangeEvent& r : events.nvtx_ranges) {
    if (r.message == 0 || r.end_ns <= r.start_ns) continue;
    if (std::optional<int64_t> n = verdict(r.message)) {
      matched.push_back(&r);
      numbers.push_back(*n);
    }
  }
  std::vector<size_t> order(matched.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return matched[a]->start_ns < matched[b]->start_ns;
  });
  int64_t ordinal = first_ordinal;
  for (size_t i : order) {
    const int64_t number = numbers[i] >= 0 ? numbers[i] : ordinal;
    ++ordinal;
    steps.push_back({number, matched[i]->start_ns, matched[i]->end_ns, "nvtx:" + pattern_});
  }
  return steps;
}

}  // namespace gpuspy::analysis
