// Host-bound: the GPU waits for the host while the host does work that is neither CUDA calls
// (launch_storm, sync_stall) nor the input pipeline (input_stall): Python between launches,
// metric computation, logging, CPU-heavy ops such as DDP's bucket (un)flattening or a foreach
// optimizer on the host. The evidence says how long, in how many gaps, between which CUDA calls
// (with their call sites when known) and what the host was running (host_activity.h).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collector/analysis/detectors/detectors.h"
#include "collector/analysis/host_activity.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinHostBoundShare = 0.10;  // GPU idle waiting for non-CUDA host work
constexpr size_t kTopActivities = 3;         // host ranges named in the evidence

// "cudaLaunchKernel at train.py:57 f" / "cudaLaunchKernel"
std::string CallName(const StepContext& ctx, const ApiEvent* a) {
  if (a == nullptr) return "the step boundary";
  const std::string name(ctx.strings.Get(a->name));
  return a->call_site == 0 ? name : name + " at " + std::string(ctx.strings.Get(a->call_site));
}

bool LooksLikeOptimizer(const std::string& name) {
  return name.find("Optimizer.step") != std::string::npos || name.find("_foreach_") != std::string::npos;
}

}  // namespace

std::optional<v1::Finding> DetectHostBound(const StepContext& ctx) {
  // The drain after a blocking call is the sync's (idle_attribution.h), not in host_other.
  const IntervalSet& waiting = ctx.idle.host_other;
  const int64_t waited = waiting.TotalLength();
  if (ctx.ShareOfWall(waited) < kMinHostBoundShare) return std::nullopt;
  const auto& gaps = waiting.intervals();
  const Interval longest = *std::max_element(gaps.begin(), gaps.end(), [](const Interval& x, const Interval& y) {
    return x.length() < y.length();
  });
  const GapNeighbours around = CallsAround(ctx.events, longest);
  const std::vector<HostActivity> doing =
      HostActivityDuring(ctx.events, ctx.strings, ctx.window(), waiting, kTopActivities);

  v1::Finding f;
  f.set_detector("host_bound");
  std::string title = absl::StrCat("GPU waited ", FormatMs(waited), " (",
                                   FormatPercent(ctx.ShareOfWall(waited)), " of the step) for the host in ",
                                   gaps.size(), gaps.size() == 1 ? " gap" : " gaps");
  if (!doing.empty()) absl::StrAppend(&title, ", mostly in ", doing.front().name);
  f.set_title(title);
  f.set_lost_ns(waited);
  f.set_severity(SeverityName(SeverityFor(ctx.ShareOfWall(waited))));
  AddEvidence(&f, "idle_host_other", Ns(waited));
  AddEvidence(&f, "gaps", Count(gaps.size()));
  AddEvidence(&f, "longest_gap", Ns(longest.length()),
              absl::StrCat(" at +", FormatMs(longest.start_ns - ctx.step.start_ns), ", between ",
                           CallName(ctx, around.before), " and ", CallName(ctx, around.after)));
  std::vector<std::string> what;
  for (const HostActivity& h : doing) {
    AddEvidence(&f, "host_activity", absl::StrCat(h.name, " = "), Ns(h.ns));
    what.push_back(h.name);
  }
  if (doing.empty()) {
    AddEvidence(&f, "host_activity", "not recorded (no host ranges: capture NVTX ranges or import a "
                                     "profiler trace with CPU ops to see it)");
  }
  std::string hint =
      "the GPU runs out of work while Python runs between CUDA calls: move per-step host work "
      "out of the loop (metrics, logging, .tolist() processing every N steps), cut per-op CPU "
      "overhead with torch.compile or CUDA graphs, or overlap it with GPU work";
  if (!doing.empty() && LooksLikeOptimizer(doing.front().name)) {
    hint = "the optimizer step is host-bound: use a fused optimizer (e.g. torch.optim.AdamW(..., "
           "fused=True) or foreach=True), or capture it with torch.compile / CUDA graphs";
  }
  f.set_fix_hint(hint);
  return f;
}

}  // namespace gpuspy::analysis
