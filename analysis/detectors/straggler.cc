// straggler: the others wait in collectives for this rank, and why. Its own step looks no worse
// than theirs (the collective equalises step times); what differs is the work before each
// collective. The cause is the largest excess over the median peer: compute kernel time (the same
// kernels slower → a slower or throttled GPU; otherwise more work → uneven shards), host time
// with the GPU idle (input pipeline when input_stall fired, else Python/launch), or syncs.
// The same kernels running longer (slower_kernels) is a slower/throttled GPU or larger inputs:
// names alone cannot tell them apart, and the hint says so.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/detectors/comm_context.h"
#include "analysis/has_finding.h"
#include "analysis/kernel_classifier.h"
#include "analysis/stats.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinCausedWaitShare = 0.05;  // of a waiting peer's step (straggler_wait's bar)
constexpr int64_t kMinCausedWaitNs = 200'000;
// Same kernels this much slower than on the peers (time-weighted): not more kernels but longer ones.
constexpr double kSlowKernelRatio = 1.10;
constexpr int kListedRanks = 8;

// What making this rank keep pace saves the job's step: the others stop waiting for it, but the
// step then runs at the next slowest rank's pace, and that rank waited for this one the least.
// So the prediction is the smallest wait of any peer, not the largest (a peer that did not wait
// at all is as slow, and fixing this rank alone saves nothing).
int64_t JobGainIfFixed(const std::vector<PeerStep>& peers) {
  int64_t gain = -1;
  for (const PeerStep& p : peers) {
    const int64_t wait = std::max<int64_t>(p.waited_for_me_ns, 0);
    gain = gain < 0 ? wait : std::min(gain, wait);
  }
  return std::max<int64_t>(gain, 0);
}

int64_t HostIdle(const v1::StepBreakdown& b) {
  return b.idle_host_other_ns() + b.idle_input_ns() + b.idle_launch_bound_ns() + b.idle_cuda_call_ns();
}

// Time-weighted ratio of this rank's median kernel durations to the peers', over the compute
// kernels both list among their top kernels; 0 when none are shared.
double KernelSlowdown(const v1::StepReport& mine, const std::vector<PeerStep>& peers) {
  absl::flat_hash_map<std::string, std::vector<int64_t>> peer_medians;
  for (const PeerStep& p : peers) {
    for (const auto& k : p.report->top_kernels()) peer_medians[k.name()].push_back(k.median_ns());
  }
  double weighted = 0, weight = 0;
  for (const auto& k : mine.top_kernels()) {
    if (ClassifyKernel(k.name()) == KernelClass::kCommunication) continue;
    auto it = peer_medians.find(k.name());
    if (it == peer_medians.end()) continue;
    const int64_t peer = stats::Median(it->second);
    if (peer <= 0) continue;
    weighted += static_cast<double>(k.total_ns()) * k.median_ns() / peer;
    weight += static_cast<double>(k.total_ns());
  }
  return weight > 0 ? weighted / weight : 0;
}

std::string RankLine(int32_t rank, const v1::StepReport& r) {
  const auto& b = r.breakdown();
  return "rank " + std::to_string(rank) + ": compute " + FormatMs(b.compute_busy_ns()) +
         ", host idle " + FormatMs(HostIdle(b)) + ", sync " + FormatMs(b.idle_sync_blocked_ns()) +
         ", comm wait " + FormatMs(b.comm_wait_ns());
}

}  // namespace

std::optional<v1::Finding> DetectStraggler(const CommStepContext& ctx) {
  int64_t caused = 0;
  int waiting = 0;
  for (const PeerStep& p : ctx.peers) {
    const int64_t wall = p.report->breakdown().wall_ns();
    if (p.waited_for_me_ns >= kMinCausedWaitNs && wall > 0 &&
        p.waited_for_me_ns >= kMinCausedWaitShare * wall) {
      ++waiting;
      caused = std::max(caused, p.waited_for_me_ns);
    }
  }
  if (waiting == 0) return std::nullopt;
  const v1::StepBreakdown& b = ctx.breakdown();
  std::vector<int64_t> compute, host, sync;
  for (const PeerStep& p : ctx.peers) {
    compute.push_back(p.report->breakdown().compute_busy_ns());
    host.push_back(HostIdle(p.report->breakdown()));
    sync.push_back(p.report->breakdown().idle_sync_blocked_ns());
  }
  const int64_t d_compute = b.compute_busy_ns() - stats::Median(compute);
  const int64_t d_host = HostIdle(b) - stats::Median(host);
  const int64_t d_sync = b.idle_sync_blocked_ns() - stats::Median(sync);
  const double slowdown = KernelSlowdown(ctx.report, ctx.peers);

  std::string cause, why, hint;
  if (d_compute >= d_host && d_compute >= d_sync) {
    const double more = stats::Median(compute) > 0 ? static_cast<double>(d_compute) / stats::Median(compute) : 0;
    if (slowdown >= kSlowKernelRatio) {
      // Kernel names do not tell a slower GPU from larger inputs to the same kernels.
      cause = "slower_kernels";
      why = "the same kernels run " + FormatPercent(slowdown - 1) + " longer than on the other ranks";
      hint = "either this GPU is slower (check clocks and throttling: nvidia-smi -q -d "
             "PERFORMANCE,CLOCK, temperature/power, ECC errors, another process sharing it; move "
             "the rank or drain the node) or this rank's inputs are larger (uneven shards, longer "
             "sequences: balance them per rank)";
    } else {
      cause = "more_compute";
      why = "it computes " + FormatMs(d_compute) + " (" + FormatPercent(more) +
            ") more than the median rank";
      hint = "uneven work across ranks: balance the shards (same batch size / sequence lengths "
             "per rank: bucket by length, pad, or a balanced sampler), or move the extra work "
             "this rank does (rank-0-only logging, evaluation, checkpointing) off the step";
    }
  } else if (d_host >= d_sync) {
    cause = HasFinding(ctx.report, v1::input_stall) ? "input" : "host";
    why = "its GPU idles " + FormatMs(d_host) + " more than the median rank's, waiting for the host" +
          (cause == "input" ? " (data loading)" : "");
    hint = cause == "input"
               ? "this rank's input pipeline is slower: more DataLoader workers, pin_memory, "
                 "prefetch; check its node's CPU and storage (shared or slower disk)"
               : "this rank's host does more Python or launches more between steps: look at its "
                 "own findings and host-side call sites; check CPU contention on its node";
  } else {
    cause = "sync";
    why = "its host blocks " + FormatMs(d_sync) + " more than the median rank's in synchronizations";
    hint = "remove the synchronizations this rank alone does (.item()/.cpu() for logging on rank "
           "0, a metric on the host); see its sync_stall finding";
  }
  v1::Finding f;
  f.set_detector(v1::straggler);
  // The renderers put "straggler: " before the title; the title does not repeat it.
  f.set_title(std::to_string(waiting) + (waiting == 1 ? " rank waits" : " ranks wait") + " up to " +
              FormatMs(caused) + " for this rank; " + why);
  const int64_t gain = JobGainIfFixed(ctx.peers);
  f.set_lost_ns(gain);
  f.set_severity(SeverityFor(ctx.ShareOfWall(gain)));
  // A cross-rank prediction, not a replay of this rank's events: the steps of the others shortened
  // by their waits for this rank, the job's step set by the slowest of what is left.
  if (ctx.breakdown().wall_ns() > 0) {
    SetWhatIf(&f, "this rank keeping pace: the job's step then runs at the next slowest rank's pace",
              ctx.breakdown().wall_ns(), gain);
  }
  AddEvidence(&f, "cause", cause);
  AddEvidence(&f, "why", why);
  AddEvidence(&f, "ranks_waiting", Count(waiting));
  AddEvidence(&f, "max_wait_caused", Ns(caused));
  AddEvidence(&f, "job_gain_if_fixed", Ns(gain));
  AddEvidence(&f, "compute_vs_median", SignedNs(d_compute));
  AddEvidence(&f, "host_idle_vs_median", SignedNs(d_host));
  if (slowdown > 0) AddEvidence(&f, "kernel_time_ratio", Ratio(slowdown));
  AddEvidence(&f, "rank", RankLine(ctx.comm().rank(), ctx.report));
  int listed = 1;
  for (const PeerStep& p : ctx.peers) {
    if (listed++ >= kListedRanks) break;
    AddEvidence(&f, "rank", RankLine(p.rank, *p.report));
  }
  f.set_fix_hint(hint);
  return f;
}

}  // namespace gpuspy::analysis
