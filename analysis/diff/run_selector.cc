#include "analysis/diff/run_selector.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpuspy::analysis {

absl::StatusOr<StepRange> ParseStepRange(const std::string& text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat("steps '", text, "' are not N, A-B, A- or -B"));
  };
  StepRange r;
  // A leading '-' is "up to", not a negative number: step numbers start at 0.
  const size_t dash = text.find('-');
  int64_t v = 0;
  if (dash == std::string::npos) {
    if (!absl::SimpleAtoi(text, &v)) return bad();
    r.first = r.last = v;
    return r;
  }
  const std::string lo = text.substr(0, dash), hi = text.substr(dash + 1);
  if (!lo.empty()) {
    if (!absl::SimpleAtoi(lo, &v)) return bad();
    r.first = v;
  }
  if (!hi.empty()) {
    if (!absl::SimpleAtoi(hi, &v)) return bad();
    r.last = v;
  }
  if (!r.first && !r.last) return bad();
  if (r.first && r.last && *r.first > *r.last) {
    return absl::InvalidArgumentError(absl::StrCat("steps '", text, "' are reversed: did you mean ",
                                                   *r.last, "-", *r.first, "?"));
  }
  return r;
}

absl::StatusOr<RunSelector> ParseRunSelector(const std::string& text) {
  RunSelector s;
  std::string rest = text;
  const size_t slash = rest.find_last_of('/');
  const size_t tail = slash == std::string::npos ? 0 : slash + 1;
  if (const size_t colon = rest.find(':', tail); colon != std::string::npos) {
    absl::StatusOr<StepRange> steps = ParseStepRange(rest.substr(colon + 1));
    if (!steps.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(text, ": ", steps.status().message()));
    }
    s.steps = *steps;
    rest.resize(colon);
  }
  if (const size_t at = rest.find('@', tail); at != std::string::npos) {
    int32_t rank = 0;
    if (!absl::SimpleAtoi(rest.substr(at + 1), &rank) || rank < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(text, ": '@", rest.substr(at + 1), "' is not a rank (@0, @1, ...)"));
    }
    s.rank = rank;
    rest.resize(at);
  }
  if (rest.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' names no run before '@' or ':'"));
  }
  s.base = rest;
  return s;
}

std::string SelectorLabel(const RunSelector& s) {
  std::string label = s.base;
  if (s.rank) absl::StrAppend(&label, "@", *s.rank);
  if (s.steps.first || s.steps.last) {
    absl::StrAppend(&label, ":", s.steps.first ? std::to_string(*s.steps.first) : "", "-",
                    s.steps.last ? std::to_string(*s.steps.last) : "");
  }
  return label;
}

}  // namespace gpuspy::analysis
