// CUDA-API-bound: the GPU sits idle while the host is inside CUDA calls that have nothing on the
// GPU to wait for: the driver doing its own work (idle_attribution.h, cuda_call). At start-up
// that is context creation (the process's first CUDA call, often hidden in an innocent query or
// in a library's cudaFree(0)), module loading (a kernel's first launch under lazy loading, JIT of
// PTX) and the caching allocator's first segments; in a steady step it is allocation or stream/
// handle creation that reaches the driver every step. Neither a sync (nothing to wait for) nor
// host Python (the host is in the driver): naming it apart keeps sync_stall and host_bound true.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/api_classifier.h"
#include "analysis/call_site_summary.h"
#include "analysis/detectors/detectors.h"

namespace gpuspy::analysis {
namespace {

constexpr size_t kListedCalls = 3;      // API names in the evidence
constexpr size_t kListedCallSites = 3;  // call sites in the evidence

struct CallTotal {
  uint64_t calls = 0;
  int64_t idle_ns = 0;  // GPU idle inside these calls (driver work)
  DriverWork work = DriverWork::kOther;
  bool startup = false;  // any of the calls is start-up work
};

}  // namespace

std::optional<v1::Finding> DetectCudaApiBound(const StepContext& ctx) {
  const int64_t idle = ctx.idle.cuda_call.TotalLength();
  if (ctx.ShareOfWall(idle) < kMinCudaCallShare) return std::nullopt;

  std::map<std::string, CallTotal> by_name;
  absl::flat_hash_set<const ApiEvent*> driver_apis;
  for (const DriverCall& c : ctx.idle.driver_calls) {
    const std::string name(ctx.strings.Get(c.api->name));
    CallTotal& t = by_name[name];
    t.calls++;
    t.idle_ns += ctx.idle.cuda_call.Intersect(IntervalSet::Union({c.span})).TotalLength();
    // A start-up call decides what the name stands for (a cudaFree that initialises a library).
    const int64_t duration = c.api->end_ns - c.api->start_ns;
    const DriverWork work = DriverWorkOf(name, duration);
    const bool startup = IsStartup(work, duration);
    if (t.calls == 1 || (startup && !t.startup)) t.work = work;
    t.startup |= startup;
    driver_apis.insert(c.api);
  }
  std::vector<std::pair<std::string, CallTotal>> ranked(by_name.begin(), by_name.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second.idle_ns > b.second.idle_ns; });
  int64_t startup_ns = 0;
  for (const auto& [name, t] : ranked) startup_ns += t.startup ? t.idle_ns : 0;
  const bool startup = startup_ns * 2 >= idle;

  v1::Finding f;
  f.set_detector(v1::cuda_api_bound);
  const auto& [top_name, top] = ranked.front();
  f.set_title(absl::StrCat(startup ? "CUDA start-up: " : "", "GPU idle ", FormatMs(idle), " (",
                           FormatPercent(ctx.ShareOfWall(idle)),
                           " of the step) while the host was inside CUDA calls with nothing on the "
                           "GPU to wait for, mostly ",
                           top_name, " (", Describe(top.work), ")"));
  f.set_lost_ns(idle);
  f.set_severity(SeverityFor(ctx.ShareOfWall(idle)));
  AddEvidence(&f, "idle_in_cuda_calls", Ns(idle));
  AddEvidence(&f, "startup", startup ? "yes: context creation or module loading" : "no");
  for (size_t i = 0; i < ranked.size() && i < kListedCalls; ++i) {
    const auto& [name, t] = ranked[i];
    AddEvidence(&f, "cuda_call", absl::StrCat(name, " x", t.calls, " = "), Ns(t.idle_ns),
                absl::StrCat(" (", Describe(t.work), ")"));
  }
  const std::vector<CallSiteCount> sites = CallSitesOf(
      ctx.events, ctx.strings, ctx.window(), [&](const ApiEvent& a) { return driver_apis.contains(&a); },
      kListedCallSites);
  for (const CallSiteCount& c : sites) AddCallSiteEvidence(&f, "call_site", c);

  std::string hint;
  if (startup) {
    hint = "CUDA start-up, paid once per process: keep these steps out of measurements (warm up "
           "first), initialise CUDA and the libraries before the timed loop (torch.cuda.init(), "
           "one dummy forward/backward); if it repeats every step, something creates CUDA state "
           "per step: new kernels (torch.compile recompiles on changing shapes), new streams or "
           "handles, cudnn.benchmark tuning new shapes";
  } else if (top.work == DriverWork::kAllocation) {
    hint = "allocations reach the driver: let the caching allocators reuse memory (no "
           "torch.cuda.empty_cache() in the loop, stable shapes, reuse pinned host buffers "
           "instead of pinning a new one per batch)";
  } else {
    hint = "create streams, events and library handles once, outside the loop, and cache what "
           "you query from the device (torch.cuda.get_device_properties) instead of asking per step";
  }
  f.set_fix_hint(sites.empty() ? hint : absl::StrCat(sites[0].site, " is where it is called: ", hint));
  return f;
}

}  // namespace gpuspy::analysis
