#include "analysis/replay/what_if_text.h"

#include "absl/strings/str_cat.h"
#include "model/units.h"

namespace gpuspy::analysis::replay {
namespace {

std::string MinusPercent(double fraction) {
  return absl::StrCat("-", static_cast<int>(fraction * 100 + 0.5), "%");
}

}  // namespace

std::string WhatIfLine(const v1::WhatIf& w) {
  return absl::StrCat("would take ", FormatMs(w.step_ns()), " without it (",
                      MinusPercent(w.gain_fraction()), "): ", w.fix());
}

std::string ReplayLine(const v1::StepReplay& r) {
  if (r.recorded_ns() == 0) return "";
  if (!r.available()) {
    return absl::StrCat("gains unavailable: ", r.unavailable_reason(),
                        "; lost times are the idle time attributed to each cause");
  }
  return absl::StrCat("all fixes together: ", FormatMs(r.all_fixes_ns()), " (",
                      MinusPercent(r.all_fixes_gain_fraction()), ")");
}

}  // namespace gpuspy::analysis::replay
