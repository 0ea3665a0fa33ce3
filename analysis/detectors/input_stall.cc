// Input / data-loader stall: the GPU sits idle while the host is in the input pipeline — in a
// DataLoader / data-loading range, or, at the step's start before its first CUDA call, in host
// work no range explains (waiting for the batch). The idle attribution decides which idle time
// that is (idle_attribution.h); this turns it into a finding.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "analysis/detectors/detectors.h"
#include "analysis/host_activity.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinInputIdleShare = 0.10;  // GPU idle waiting for the input pipeline
constexpr size_t kTopActivities = 2;

}  // namespace

std::optional<v1::Finding> DetectInputStall(const StepContext& ctx) {
  const auto& b = ctx.breakdown;
  const int64_t waited = b.idle_input_ns();
  if (ctx.ShareOfWall(waited) < kMinInputIdleShare) return std::nullopt;
  const auto& gaps = ctx.idle.input.intervals();
  const int64_t leading = gaps.front().start_ns <= ctx.step.start_ns ? gaps.front().length() : 0;

  v1::Finding f;
  f.set_detector("input_stall");
  f.set_title(absl::StrCat("GPU idle ", FormatMs(waited), " (", FormatPercent(ctx.ShareOfWall(waited)),
                           " of the step) waiting for input",
                           leading > 0 ? absl::StrCat(": ", FormatMs(leading), " before the step's first CUDA call")
                                       : std::string()));
  f.set_lost_ns(waited);
  f.set_severity(SeverityName(SeverityFor(ctx.ShareOfWall(waited))));
  AddEvidence(&f, "idle_waiting_for_input", Ns(waited),
              absl::StrCat(" (", Render(Fraction(ctx.ShareOfWall(waited))), " of step)"));
  AddEvidence(&f, "leading_gap", Ns(leading));
  for (const HostActivity& h :
       HostActivityDuring(ctx.events, ctx.strings, ctx.window(), ctx.idle.input, kTopActivities)) {
    AddEvidence(&f, "host_activity", absl::StrCat(h.name, " = "), Ns(h.ns));
  }
  f.set_fix_hint(
      "the input pipeline does not keep up: raise DataLoader num_workers, set pin_memory=True, "
      "persistent_workers=True and prefetch_factor, move decoding/augmentation to the GPU, or "
      "cache preprocessed data");
  return f;
}

}  // namespace gpuspy::analysis
