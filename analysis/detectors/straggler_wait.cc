// straggler_wait: this rank spent a large part of the step inside collectives waiting for the
// last rank to arrive. Its GPU looks busy (an NCCL kernel is running) but does no useful work,
// and its step time is the straggler's: a synchronous collective equalises step times, so only
// the waits show who is late.
#include <algorithm>
#include <string>

#include "analysis/comm/collective_op.h"
#include "analysis/detectors/comm_context.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinWaitShare = 0.05;    // of the step: as much as sync_stall needs
constexpr int64_t kMinWaitNs = 200'000;   // below this, launch jitter between ranks
constexpr int kListedCollectives = 3;

std::string WhoFor(int32_t rank) {
  if (rank >= 0) return "rank " + std::to_string(rank);
  return "a peer that was not captured";
}

}  // namespace

std::optional<v1::Finding> DetectStragglerWait(const CommStepContext& ctx) {
  const v1::CommSummary& c = ctx.comm();
  // What the wait costs is the part no compute overlaps (a DDP bucket waiting while backward
  // still runs on another stream loses nothing until compute runs out).
  const int64_t exposed = c.exposed_wait_ns();
  if (exposed < kMinWaitNs || ctx.ShareOfWall(exposed) < kMinWaitShare) return std::nullopt;
  // What this rank gains is what the job gains when the late rank keeps pace: the step then runs
  // at the next slowest rank's pace, so a rank that waited longer than that keeps waiting for it.
  // One cost, one figure: the straggler's own finding predicts the same.
  const int64_t lost = ctx.late_rank_fix_gain_ns ? std::min(exposed, *ctx.late_rank_fix_gain_ns) : exposed;
  v1::Finding f;
  f.set_detector(v1::straggler_wait);
  f.set_title("waited " + FormatMs(exposed) + " (" + FormatPercent(ctx.ShareOfWall(exposed)) +
              " of the step) inside collectives for " + WhoFor(c.waited_for_rank()) +
              " with nothing else to run");
  f.set_lost_ns(lost);
  f.set_severity(SeverityFor(ctx.ShareOfWall(lost)));
  AddEvidence(&f, "waited_for", WhoFor(c.waited_for_rank()));
  AddEvidence(&f, "comm_wait", Ns(c.wait_ns()));
  AddEvidence(&f, "comm_wait_exposed", Ns(exposed));
  if (ctx.late_rank_fix_gain_ns) AddEvidence(&f, "job_gain_if_fixed", Ns(lost));
  AddEvidence(&f, "comm_transfer", Ns(c.transfer_ns()));
  AddEvidence(&f, "collectives", Count(c.collective_count()));
  int listed = 0;
  for (const v1::CollectiveWait& w : c.collectives()) {
    if (w.wait_ns() <= 0 || listed++ == kListedCollectives) continue;
    const std::string nccl = DescribeNcclTraits(NcclTraitsOfKernel(w.kernel()));
    AddEvidence(&f, "collective",
                w.op() + "#" + std::to_string(w.index()) + (nccl.empty() ? "" : " (" + nccl + ")") +
                    ": wait ",
                Ns(w.wait_ns()),
                " of " + FormatMs(w.duration_ns()) + ", last to arrive: " + WhoFor(w.last_rank()) +
                    " (" + w.kernel() + ")");
  }
  if (ctx.late_rank_fix_gain_ns && ctx.breakdown().wall_ns() > 0) {
    SetWhatIf(&f, WhoFor(c.waited_for_rank()) + " keeping pace: the job's step then runs at the next slowest rank's pace",
              ctx.breakdown().wall_ns(), lost);
  }
  if (c.waited_for_rank() >= 0) {
    f.set_fix_hint("this rank is not the problem: its GPU idles inside the collective until rank " +
                   std::to_string(c.waited_for_rank()) +
                   " arrives; fix that rank (see its straggler finding: gpuspy report --job " +
                   std::string(kJobPlaceholder) + " --rank " + std::to_string(c.waited_for_rank()) + ")");
  } else {
    f.set_fix_hint("the collective took far longer than the same collective does in other steps "
                   "while this rank was ready: another rank arrived late. Capture every rank "
                   "(gpuspy attach --job) to see which one and why");
  }
  return f;
}

}  // namespace gpuspy::analysis
