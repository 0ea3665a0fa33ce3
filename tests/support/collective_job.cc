#include "tests/support/collective_job.h"

#include <algorithm>

namespace gpuspy::testing {
namespace {

constexpr StreamKey kComputeStream{0, 1, 7};
constexpr StreamKey kNcclStream{0, 1, 13};
constexpr char kComputeKernel[] = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
constexpr char kOptimizerKernel[] = "void at::native::multi_tensor_apply_kernel<Adam>";

}  // namespace

std::vector<CollectiveJobRank> BuildCollectiveJob(const CollectiveJobPlan& plan) {
  const size_t n = plan.ranks.size();
  std::vector<CollectiveJobRank> out(n);
  for (size_t r = 0; r < n; ++r) out[r].rank = static_cast<int>(r);
  uint64_t corr = 1;
  int64_t step_start = 1'000'000'000;  // the same instant on every rank (the previous step ended together)
  const int k = std::max(1, plan.collectives_per_step);
  for (int s = 0; s < plan.steps; ++s) {
    std::vector<std::vector<int64_t>> launch(n, std::vector<int64_t>(k));
    for (size_t r = 0; r < n; ++r) {
      const RankPlan& p = plan.ranks[r];
      const bool slow = std::find(p.slow_steps.begin(), p.slow_steps.end(), s) != p.slow_steps.end();
      const int64_t kernels = (slow ? p.slow_compute_ns : p.compute_ns) / plan.kernel_ns;
      const int64_t per_kernel = static_cast<int64_t>(plan.kernel_ns * p.kernel_slowdown);
      const int64_t compute = kernels * per_kernel;
      const int64_t t0 = step_start + p.input_gap_ns;
      for (int i = 0; i < k; ++i) {
        launch[r][i] = plan.overlapped ? t0 + compute * (i + 1) / k : t0 + compute;
        if (plan.arrival_jitter_ns > 0) {
          const uint64_t h = (static_cast<uint64_t>(r) * 1'000'003 + s * 7'919 + i) * 0x9E3779B97F4A7C15ull;
          launch[r][i] += static_cast<int64_t>((h >> 33) % static_cast<uint64_t>(plan.arrival_jitter_ns));
        }
      }
      CollectiveJobRank& out_r = out[r];
      for (int64_t j = 0; j < kernels; ++j) {
        const int64_t ks = t0 + j * per_kernel;
        out_r.events.kernels.push_back({ks + p.clock_offset_ns, ks + per_kernel + p.clock_offset_ns,
                                        corr++, out_r.strings.Intern(kComputeKernel), kComputeStream,
                                        {}, 0});
      }
    }
    std::vector<int64_t> wait(n, 0);
    int64_t prev_end = 0;
    for (int i = 0; i < k; ++i) {
      int64_t last = 0;
      std::vector<int64_t> start(n);
      for (size_t r = 0; r < n; ++r) {
        start[r] = std::max(launch[r][i], prev_end);
        last = std::max(last, start[r]);
      }
      const int64_t end = last + plan.transfer_ns;
      for (size_t r = 0; r < n; ++r) {
        CollectiveJobRank& out_r = out[r];
        const int64_t off = plan.ranks[r].clock_offset_ns;
        const uint64_t c = corr++;
        out_r.events.kernels.push_back({start[r] + off, end + off, c,
                                        out_r.strings.Intern(plan.kernel), kNcclStream, {}, 0});
        if (plan.with_args) {
          out_r.events.collectives.push_back({c, out_r.strings.Intern(plan.op),
                                              out_r.strings.Intern("Float"), out_r.strings.Intern("0"),
                                              plan.bytes, plan.bytes, static_cast<uint32_t>(n), -1});
        }
        wait[r] += last - start[r];
      }
      prev_end = end;
    }
    const int64_t step_end = prev_end + plan.post_ns;
    for (size_t r = 0; r < n; ++r) {
      CollectiveJobRank& out_r = out[r];
      const int64_t off = plan.ranks[r].clock_offset_ns;
      out_r.events.kernels.push_back({prev_end + off, step_end - 10'000 + off, corr++,
                                      out_r.strings.Intern(kOptimizerKernel), kComputeStream, {}, 0});
      out_r.events.nvtx_ranges.push_back({step_start + off, step_end + off, 0,
                                          out_r.strings.Intern("ProfilerStep#" + std::to_string(s)),
                                          1, 0});
      out_r.wait_ns.push_back(wait[r]);
    }
    step_start = step_end;
  }
  return out;
}

}  // namespace gpuspy::testing
