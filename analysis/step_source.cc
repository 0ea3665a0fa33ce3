#include "analysis/step_source.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/evidence.h"

namespace gpuspy::analysis {
namespace {

constexpr char kWindowPrefix[] = "window:";
constexpr size_t kWindowPrefixSize = sizeof(kWindowPrefix) - 1;

}  // namespace

std::string WindowSource(int64_t window_ns) {
  return absl::StrCat(kWindowPrefix, window_ns / 1'000'000, "ms");
}

bool IsPeriodStep(std::string_view source) { return source.starts_with("period:"); }

uint64_t PeriodKernels(std::string_view source) {
  if (!IsPeriodStep(source)) return 0;
  uint64_t n = 0;
  for (char c : source.substr(sizeof("period:") - 1)) {
    if (c < '0' || c > '9') break;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

bool IsTimeWindow(std::string_view source) {
  return absl::StartsWith(absl::string_view(source.data(), source.size()), kWindowPrefix);
}

std::string_view StepNoun(std::string_view source) { return IsTimeWindow(source) ? "window" : "step"; }

std::string WindowExplanation(std::string_view source) {
  std::string_view length = source.substr(std::min(source.size(), kWindowPrefixSize));
  if (length.size() > 2 && length.substr(length.size() - 2) == "ms") length.remove_suffix(2);
  return absl::StrCat("a ", absl::string_view(length.data(), length.size()),
                      " ms time window, not a step: no NVTX range matched the step pattern and no "
                      "repeating kernel sequence was found");
}

void MarkWindowFindings(v1::StepReport* report) {
  if (!IsTimeWindow(report->step())) return;
  const std::string why = WindowExplanation(report->step().source());
  for (v1::Finding& f : *report->mutable_findings()) {
    const bool marked = std::any_of(f.evidence().begin(), f.evidence().end(),
                                    [](const v1::Evidence& e) { return e.key() == kWindowEvidenceKey; });
    if (marked) continue;
    AddEvidence(&f, kWindowEvidenceKey, why);
    auto* all = f.mutable_evidence();
    std::rotate(all->begin(), all->end() - 1, all->end());
  }
}

}  // namespace gpuspy::analysis
