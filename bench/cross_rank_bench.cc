// The cross-rank pass at cluster scale: a job of R ranks x S steps x C collectives per rank per
// step (default 64 x 100 x 2000, one straggler, jittered arrivals), built as the per-step
// analyses the collector holds, then AnalyzeRanks. Prints wall time and memory: the job's input
// (what the collector already holds) and what the pass adds on top (peak RSS growth).
//   cross_rank_bench [ranks] [steps] [collectives]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "analysis/cross_rank_analysis.h"

namespace {

using gpuspy::analysis::CollectiveOp;
using gpuspy::analysis::RankSeries;
using gpuspy::analysis::StepAnalysis;
using gpuspy::analysis::StepCollective;

double PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 64;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
  const int per_step = argc > 3 ? std::atoi(argv[3]) : 2000;
  constexpr int64_t kStepNs = 500'000'000;
  constexpr int64_t kTransferNs = 50'000;
  constexpr int kStraggler = 7;
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int64_t> jitter(0, 20'000);

  std::vector<std::vector<StepAnalysis>> job(ranks, std::vector<StepAnalysis>(steps));
  for (int s = 0; s < steps; ++s) {
    const int64_t start = s * kStepNs;
    for (int r = 0; r < ranks; ++r) {
      StepAnalysis& a = job[r][s];
      a.report.mutable_step()->set_number(s);
      a.report.mutable_step()->set_start_ns(start);
      a.report.mutable_step()->set_end_ns(start + kStepNs);
      a.report.mutable_breakdown()->set_wall_ns(kStepNs);
      a.report.mutable_breakdown()->set_communication_ns(per_step * kTransferNs);
      a.report.mutable_comm()->set_comm_ns(per_step * kTransferNs);
      auto collectives = std::make_shared<gpuspy::analysis::StepCollectives>();
      collectives->kernels = {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL"};
      collectives->ops.reserve(per_step);
      a.collectives = collectives;
    }
    // Collective k: every rank arrives at a jittered time, the straggler 40 us late; all end
    // together at the last arrival + transfer.
    for (int k = 0; k < per_step; ++k) {
      const int64_t nominal = start + k * (kStepNs / per_step);
      std::vector<int64_t> arrival(ranks);
      int64_t last = 0;
      for (int r = 0; r < ranks; ++r) {
        arrival[r] = nominal + jitter(rng) + (r == kStraggler ? 40'000 : 0);
        last = std::max(last, arrival[r]);
      }
      for (int r = 0; r < ranks; ++r) {
        StepCollective c;
        c.start_ns = arrival[r];
        c.end_ns = last + kTransferNs;
        c.op = CollectiveOp::kAllReduce;
        c.index = static_cast<uint32_t>(k);
        c.bytes = 4ull << 20;
        c.group_size = static_cast<uint32_t>(ranks);
        std::const_pointer_cast<gpuspy::analysis::StepCollectives>(job[r][s].collectives)->ops.push_back(c);
      }
    }
  }
  size_t input_bytes = 0;
  for (const auto& rank : job) {
    for (const auto& a : rank) input_bytes += a.collectives->ApproxBytes();
  }
  const double rss_before = PeakRssMiB();
  std::vector<RankSeries> series;
  for (int r = 0; r < ranks; ++r) series.push_back({r, static_cast<uint32_t>(ranks), &job[r]});
  const auto t0 = std::chrono::steady_clock::now();
  gpuspy::analysis::AnalyzeRanks(series);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double rss_after = PeakRssMiB();
  int waiting = 0;
  for (int r = 0; r < ranks; ++r) waiting += job[r][steps / 2].report.comm().waited_for_rank() == kStraggler;
  std::printf("| %d ranks x %d steps x %d collectives/rank/step | %.2f s | %.1f M collectives/s | "
              "input %.0f MiB | pass adds %.0f MiB peak RSS | %d/%d ranks name rank %d |\n",
              ranks, steps, per_step, seconds,
              static_cast<double>(ranks) * steps * per_step / seconds / 1e6,
              input_bytes / 1048576.0, rss_after - rss_before, waiting, ranks - 1, kStraggler);
  return 0;
}
