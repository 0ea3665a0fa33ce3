// comm_storm: hundreds of small collectives per step. Each costs NCCL's latency (tens of µs)
// whatever its size, so the step pays count × latency where a few large buckets would pay a few
// latencies plus bytes at full bandwidth (DDP with a tiny bucket_cap_mb, per-parameter
// all-reduces, many parameter groups).
#include <algorithm>
#include <cstdio>

#include "analysis/comm/collective_op.h"
#include "analysis/detectors/comm_context.h"

namespace gpuspy::analysis {
namespace {

constexpr uint64_t kMinStormCollectives = 100;
constexpr uint64_t kMaxStormMedianBytes = 512 << 10;     // when message sizes are known
constexpr int64_t kMaxStormMeanTransferNs = 100'000;     // when they are not: latency-bound
constexpr double kMinStormCommShare = 0.10;
// What a coalesced version would run: one collective per kBucketBytes (DDP's default
// bucket_cap_mb), or, sizes unknown, kAssumedCoalescing times fewer collectives.
constexpr uint64_t kBucketBytes = 25ull << 20;
constexpr uint64_t kAssumedCoalescing = 16;

int64_t MeanTransferNs(const v1::CommSummary& c) {
  return c.collective_count() > 0 ? c.transfer_ns() / static_cast<int64_t>(c.collective_count()) : 0;
}

}  // namespace

bool IsCommStorm(const v1::StepReport& r) {
  const v1::CommSummary& c = r.comm();
  if (c.collective_count() < kMinStormCollectives) return false;
  const bool small = c.median_bytes() > 0 ? c.median_bytes() <= kMaxStormMedianBytes
                                          : MeanTransferNs(c) <= kMaxStormMeanTransferNs;
  const int64_t wall = r.breakdown().wall_ns();
  return small && wall > 0 && r.breakdown().communication_ns() >= kMinStormCommShare * wall;
}

std::optional<v1::Finding> DetectCommStorm(const CommStepContext& ctx) {
  if (!IsCommStorm(ctx.report)) return std::nullopt;
  const v1::CommSummary& c = ctx.comm();
  const uint64_t coalesced =
      c.bytes() > 0 ? std::max<uint64_t>(1, (c.bytes() + kBucketBytes - 1) / kBucketBytes)
                    : std::max<uint64_t>(1, c.collective_count() / kAssumedCoalescing);
  // Each of today's collectives costs about its time, waits for the usual arrival jitter
  // included (every collective is a sync point); the coalesced ones would cost as much each.
  // Only communication that no compute overlaps (exposed_comm_ns) lengthens the step: what the
  // coalescing would save is capped at it, so the lost figure never exceeds the exposed one shown
  // beside it.
  const int64_t comm_ns = ctx.breakdown().communication_ns();
  const int64_t saved_ns =
      static_cast<int64_t>(c.collective_count() - std::min(coalesced, c.collective_count())) *
      (comm_ns / static_cast<int64_t>(c.collective_count()));
  const int64_t lost = std::min({comm_ns, ctx.breakdown().exposed_comm_ns(), saved_ns});
  v1::Finding f;
  f.set_detector(v1::comm_storm);
  f.set_title(std::to_string(c.collective_count()) + " collectives in one step" +
              (c.median_bytes() > 0 ? " (median " + FormatBytes(c.median_bytes()) + ")" : "") +
              ": latency-bound communication, " + FormatMs(ctx.breakdown().communication_ns()) +
              " in total");
  f.set_lost_ns(lost);
  f.set_severity(SeverityFor(ctx.ShareOfWall(lost)));
  AddEvidence(&f, "collectives", Count(c.collective_count()));
  if (c.median_bytes() > 0) AddEvidence(&f, "median_message", Bytes(c.median_bytes()));
  AddEvidence(&f, "mean_collective", Ns(MeanTransferNs(c)));
  AddEvidence(&f, "communication", Ns(ctx.breakdown().communication_ns()));
  AddEvidence(&f, "exposed_comm", Ns(ctx.breakdown().exposed_comm_ns()));
  if (c.bus_bandwidth_gbps() > 0) {
    AddEvidence(&f, "bus_bandwidth", BytesPerSecond(c.bus_bandwidth_gbps() * 1e9));
  }
  AddEvidence(&f, "coalesced_estimate", Count(coalesced), coalesced == 1 ? " collective" : " collectives");
  // The kernel says what NCCL chose: LL is its protocol for small, latency-bound messages.
  if (!c.collectives().empty()) {
    const NcclKernelTraits t = NcclTraitsOfKernel(c.collectives(0).kernel());
    const std::string nccl = DescribeNcclTraits(t);
    if (!nccl.empty()) {
      AddEvidence(&f, "nccl", nccl + (t.protocol == "LL" ? " (the low-latency protocol NCCL "
                                                             "uses for small messages)"
                                                           : ""));
    }
  }
  f.set_fix_hint("coalesce communication: raise DDP's bucket_cap_mb (default 25), use fewer "
                 "parameter groups / flatten parameters, all-reduce a list of tensors together "
                 "(torch.distributed coalescing, FSDP flat parameters) instead of one call per "
                 "tensor");
  return f;
}

}  // namespace gpuspy::analysis
