// exposed_comm: communication that no compute overlaps. DDP all-reduces gradient buckets while
// backward still runs; a long all-reduce tail after backward (one big bucket, or buckets that
// start late) leaves the GPU moving data with nothing to compute. Waiting for a late rank is
// excluded (that is straggler_wait), and so is a storm of tiny collectives (comm_storm's cause).
// A rank analysed alone cannot tell a wait from a slow transfer: what its collectives took beyond
// their best instances is shown as unattributed and not counted as the finding's cost.
#include <algorithm>

#include "analysis/detectors/comm_context.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinExposedShare = 0.15;   // of the step, waits excluded
constexpr int64_t kMinExposedNs = 500'000;

}  // namespace

std::optional<v1::Finding> DetectExposedComm(const CommStepContext& ctx) {
  const v1::StepBreakdown& b = ctx.breakdown();
  const v1::CommSummary& c = ctx.comm();
  const int64_t exposed_all = b.exposed_comm_ns() - std::min(b.exposed_comm_ns(), c.exposed_wait_ns());
  // With no peer's trace, what the collectives took beyond their best instances may be waiting
  // for another rank: shown, but not claimed as what overlapping would save (its share unknown).
  const int64_t unattributed = std::min(exposed_all, c.exposed_unattributed_ns());
  const int64_t exposed = exposed_all - unattributed;
  if (exposed_all < kMinExposedNs || ctx.ShareOfWall(exposed_all) < kMinExposedShare ||
      IsCommStorm(ctx.report)) {
    return std::nullopt;
  }
  v1::Finding f;
  f.set_detector(v1::exposed_comm);
  const double overlap =
      b.communication_ns() > 0 ? 1.0 - static_cast<double>(b.exposed_comm_ns()) / b.communication_ns() : 0;
  f.set_title("communication not overlapped with compute: " + FormatMs(exposed_all) + " (" +
              FormatPercent(ctx.ShareOfWall(exposed_all)) + " of the step)" +
              (c.tail_ns() > 0 ? ", " + FormatMs(c.tail_ns()) + " of it after the last compute" : "") +
              (unattributed > 0 ? "; " + FormatMs(unattributed) +
                                      " of it beyond the collectives' best times, with no peer's "
                                      "trace to tell waiting for another rank from slower transfers"
                                : ""));
  f.set_lost_ns(exposed);
  f.set_severity(SeverityFor(ctx.ShareOfWall(exposed)));
  AddEvidence(&f, "exposed_comm", Ns(exposed));
  if (unattributed > 0) {
    AddEvidence(&f, "exposed_unattributed", Ns(unattributed),
                " (wait share unknown: capture the other ranks to see who was late)");
  }
  AddEvidence(&f, "communication", Ns(b.communication_ns()));
  AddEvidence(&f, "overlap", Fraction(overlap));
  AddEvidence(&f, "tail_after_compute", Ns(c.tail_ns()));
  if (c.bus_bandwidth_gbps() > 0) {
    AddEvidence(&f, "bus_bandwidth", BytesPerSecond(c.bus_bandwidth_gbps() * 1e9));
  }
  f.set_fix_hint(
      "overlap communication with backward: DDP reduces gradient buckets as backward produces "
      "them, so a long tail means the last buckets are large or start late (lower bucket_cap_mb, "
      "static_graph=True, avoid no_sync deferring all reduction to one step); FSDP: "
      "backward_prefetch/forward_prefetch; fewer bytes: bf16 gradients or a compression hook");
  return f;
}

}  // namespace gpuspy::analysis
