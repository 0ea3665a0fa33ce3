// gpu_idle: the GPU idles a large share of the step and no other detector explains it. Its lost
// time is all of the idle; the evidence splits it by cause so the reader sees none dominates.
#include "analysis/detectors/detectors.h"
#include "analysis/evidence.h"

namespace gpuspy::analysis {
namespace {

// Of the step's wall time; below it, an idle GPU with no named cause is not worth a finding.
constexpr double kUnexplainedIdleShare = 0.30;

}  // namespace

std::optional<v1::Finding> DetectGpuIdle(const StepContext& ctx) {
  const v1::StepBreakdown& b = ctx.breakdown;
  const double share = ctx.ShareOfWall(b.gpu_idle_ns());
  if (share < kUnexplainedIdleShare) return std::nullopt;
  v1::Finding f;
  f.set_detector(v1::gpu_idle);
  f.set_title("GPU idle " + FormatPercent(share) + " of the step without a single dominant cause");
  f.set_lost_ns(b.gpu_idle_ns());
  f.set_severity(SeverityFor(share));
  AddEvidence(&f, "idle_sync_blocked", Ns(b.idle_sync_blocked_ns()));
  AddEvidence(&f, "idle_launch_bound", Ns(b.idle_launch_bound_ns()));
  AddEvidence(&f, "idle_input", Ns(b.idle_input_ns()));
  AddEvidence(&f, "idle_host_other", Ns(b.idle_host_other_ns()));
  AddEvidence(&f, "idle_in_cuda_calls", Ns(b.idle_cuda_call_ns()));
  f.set_fix_hint("look at the step's timeline (gpuspy export) for what the host does between GPU work");
  return f;
}

}  // namespace gpuspy::analysis
