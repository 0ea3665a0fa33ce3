// Input / data-loader stall: the GPU sits idle while the host is in the input pipeline — in a
// DataLoader / data-loading range, or, at the step's start before its first CUDA call, in host
// work no range explains (waiting for the batch). The idle attribution decides which idle time
// that is (idle_attribution.h); this turns it into a finding.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/detectors/detectors.h"
#include "analysis/call_site_summary.h"
#include "analysis/host_activity.h"
#include "analysis/idle_attribution.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinInputIdleShare = 0.10;  // GPU idle waiting for the input pipeline
// Without a data-loading range, the leading gap is only a guess at input (it may be weight
// initialisation, a checkpoint load, any Python before the first launch): below this it is not
// worth a finding of its own (a 0.57 ms gap in a 5 ms step is launch-time noise, not a stall).
constexpr int64_t kMinUnnamedInputNs = 2'000'000;
constexpr size_t kListedInputActivities = 2;

// Input idle inside a data-loading host range (IsInputRange): the evidence that the wait is the
// input pipeline's, not just time before the step's first CUDA call.
int64_t InLoaderRangesNs(const StepContext& ctx) {
  std::vector<Interval> loader;
  for (const NvtxRangeEvent& r : ctx.events.nvtx_ranges) {
    if (IsInputRange(ctx.strings.Get(r.message))) loader.push_back({r.start_ns, r.end_ns});
  }
  return ctx.idle.input.Intersect(IntervalSet::Union(std::move(loader)).Clip(ctx.window())).TotalLength();
}

}  // namespace

std::optional<v1::Finding> DetectInputStall(const StepContext& ctx) {
  const auto& b = ctx.breakdown;
  const int64_t waited = b.idle_input_ns();
  if (ctx.ShareOfWall(waited) < kMinInputIdleShare) return std::nullopt;
  const auto& gaps = ctx.idle.input.intervals();
  const int64_t leading = gaps.front().start_ns <= ctx.step.start_ns ? gaps.front().length() : 0;
  const int64_t in_loader = InLoaderRangesNs(ctx);
  const bool loader_evidence = in_loader > 0;
  if (!loader_evidence && waited < kMinUnnamedInputNs) return std::nullopt;

  v1::Finding f;
  f.set_detector(v1::input_stall);
  const std::string share = FormatPercent(ctx.ShareOfWall(waited));
  if (loader_evidence) {
    f.set_title(absl::StrCat("GPU idle ", FormatMs(waited), " (", share, " of the step) waiting for input",
                             leading > 0 ? absl::StrCat(": ", FormatMs(leading), " before the step's first CUDA call")
                                         : std::string()));
  } else {
    f.set_title(absl::StrCat("GPU idle ", FormatMs(waited), " (", share,
                             " of the step) before the step's first CUDA call, in host work no range names "
                             "(waiting for input, or set-up)"));
  }
  f.set_lost_ns(waited);
  f.set_severity(SeverityFor(ctx.ShareOfWall(waited)));
  AddEvidence(&f, "idle_waiting_for_input", Ns(waited),
              absl::StrCat(" (", Render(Fraction(ctx.ShareOfWall(waited))), " of step)"));
  AddEvidence(&f, "leading_gap", Ns(leading));
  AddEvidence(&f, "in_data_loading_ranges", Ns(in_loader));
  for (const HostActivity& h : ctx.host_activity().During(ctx.idle.input, kListedInputActivities)) {
    AddEvidence(&f, "host_activity", absl::StrCat(h.name, " = "), Ns(h.ns));
  }
  // The user's lines that ran meanwhile (a with_stack trace's Python frames): where to look.
  const std::vector<HostActivity> lines =
      ctx.host_activity().During(ctx.idle.input, kListedInputActivities, HostView::kUserLines);
  AddHostLineEvidence(&f, lines, "");
  // Only a data-loading range says the wait is the data loader's; without one the fix must not
  // name it (weight initialisation before the first launch looks the same).
  f.set_fix_hint(
      loader_evidence
          ? "the input pipeline does not keep up: raise DataLoader num_workers, set pin_memory=True, "
            "persistent_workers=True and prefetch_factor, move decoding/augmentation to the GPU, or "
            "cache preprocessed data"
          : "no data-loading range covers this time, so what the host did is not recorded: it may "
            "wait for the next batch or do set-up (weight initialisation, checkpoint loading, "
            "Python before the first launch). Wrap the batch fetch in "
            "torch.profiler.record_function(\"data_load\") (or an NVTX range) to tell them apart; "
            "set-up work belongs before the training loop");
  if (!lines.empty()) {
    f.set_fix_hint(absl::StrCat("the host spends ", FormatMs(lines.front().ns), " of this wait in ",
                                lines.front().name, ": ", f.fix_hint()));
  }
  return f;
}

}  // namespace gpuspy::analysis
