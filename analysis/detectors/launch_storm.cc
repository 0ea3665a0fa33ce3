// Launch-overhead storm: the GPU finishes each kernel before the host has launched the next, so
// it idles while the host sits in launch calls and in the short gaps between kernels
// (idle_launch_bound). Classically many tiny kernels; kernels of any length whose launches
// cannot keep up (slow launch calls: a contended CPU, per-launch host work) are the same loss,
// and the title says which.
#include <algorithm>
#include <map>
#include <vector>

#include "analysis/api_classifier.h"
#include "analysis/api_name_memo.h"
#include "analysis/call_site_summary.h"
#include "analysis/detectors/detectors.h"

namespace gpuspy::analysis {
namespace {

constexpr uint64_t kMinKernels = 50;             // per step: a storm is many launches
constexpr double kMinLaunchBoundIdleShare = 0.10;  // GPU idle while host launches
constexpr size_t kListedLaunchSites = 3;           // launch call sites in the evidence

}  // namespace

std::optional<v1::Finding> DetectLaunchStorm(const StepContext& ctx) {
  const auto& b = ctx.breakdown;
  if (b.kernel_count() < kMinKernels) return std::nullopt;
  if (ctx.ShareOfWall(b.idle_launch_bound_ns()) < kMinLaunchBoundIdleShare) return std::nullopt;

  uint64_t launches = 0;
  ApiNameMemo is_launch(ctx.strings, IsLaunchApi);
  for (const ApiEvent& a : ctx.events.apis) {
    if (ctx.InWindow(a.start_ns, a.end_ns) && is_launch(a.name)) ++launches;
  }
  std::map<StringRef, uint64_t> short_kernels;
  for (const KernelEvent& k : ctx.events.kernels) {
    if (ctx.InWindow(k.start_ns, k.end_ns) && k.end_ns - k.start_ns < kShortKernelNs) {
      short_kernels[k.name]++;
    }
  }
  std::vector<std::pair<uint64_t, StringRef>> ranked;
  for (const auto& [name, n] : short_kernels) ranked.emplace_back(n, name);
  std::sort(ranked.rbegin(), ranked.rend());

  v1::Finding f;
  f.set_detector(v1::launch_storm);
  const bool tiny = b.kernel_median_ns() < kShortKernelNs;
  f.set_title(std::to_string(b.kernel_count()) + (tiny ? " tiny" : "") + " kernels with median " +
              FormatUs(b.kernel_median_ns()) + ": the GPU waits on kernel launches " +
              FormatMs(b.idle_launch_bound_ns()) + " per step" +
              (tiny ? "" : " (the launches cannot keep up with kernels of this length)"));
  f.set_lost_ns(b.idle_launch_bound_ns());
  f.set_severity(SeverityFor(ctx.ShareOfWall(b.idle_launch_bound_ns())));
  AddEvidence(&f, "kernels", Count(b.kernel_count()));
  AddEvidence(&f, "median_kernel", Ns(b.kernel_median_ns()));
  AddEvidence(&f, "launch_calls", Count(launches));
  if (launches > 0) AddEvidence(&f, "mean_launch_call", Ns(b.launch_api_ns() / launches));
  AddEvidence(&f, "gpu_busy", Fraction(ctx.ShareOfWall(b.gpu_busy_ns())));
  AddEvidence(&f, "gpu_idle_while_launching", Ns(b.idle_launch_bound_ns()));
  for (size_t i = 0; i < ranked.size() && i < 3; ++i) {
    AddEvidence(&f, "short_kernel", std::string(ctx.strings.Get(ranked[i].second)) + " x",
                Count(ranked[i].first));
  }
  // Where the launches come from (sampled 1 in N live; every call in a with_stack trace).
  for (const CallSiteCount& c : CallSitesOf(
           ctx.events, ctx.strings, ctx.window(),
           [&](const ApiEvent& a) { return IsLaunchApi(ctx.strings.Get(a.name)); }, kListedLaunchSites)) {
    AddCallSiteEvidence(&f, "launch_site", c);
  }
  std::string hint =
      "fuse small ops: torch.compile (mode='reduce-overhead' also captures CUDA graphs), CUDA "
      "graphs for static shapes, fused/foreach optimizers (e.g. AdamW(fused=True)), or a larger "
      "batch per launch";
  if (!tiny) {
    hint = "the host launches slower than the GPU runs: check for a contended CPU (other "
           "processes, too few cores per rank, dataloader workers on the same cores) and per-op "
           "host work; then " + hint;
  }
  f.set_fix_hint(hint);
  return f;
}

}  // namespace gpuspy::analysis
