// Allocator churn: cudaMalloc/cudaFree inside the step. PyTorch's caching allocator normally
// makes these rare after warm-up; many per step means it is being defeated (empty_cache(),
// fragmentation, changing shapes), and cudaFree synchronizes the device.
#include <map>
#include <string>
#include <vector>

#include "analysis/api_classifier.h"
#include "analysis/call_site_summary.h"
#include "analysis/detectors/detectors.h"

namespace gpuspy::analysis {
namespace {

constexpr uint64_t kMinAllocatorCalls = 10;  // cudaMalloc/cudaFree (runtime or driver) per step
constexpr uint64_t kMinMemoryOps = 20;       // or MEMORY2 alloc+free records per step
constexpr size_t kListedAllocatorSites = 3;  // allocator call sites in the evidence

}  // namespace

std::optional<v1::Finding> DetectAllocChurn(const StepContext& ctx) {
  uint64_t calls = 0, malloc_calls = 0;
  std::vector<Interval> spans;
  std::map<std::string, uint64_t> by_name;
  for (const ApiEvent& a : ctx.events.apis) {
    if (!ctx.InWindow(a.start_ns, a.end_ns)) continue;
    const std::string_view name = ctx.strings.Get(a.name);
    if (!IsDeviceAllocatorApi(name)) continue;
    ++calls;
    if (name.find("Free") == std::string_view::npos) ++malloc_calls;
    // Every call is listed (the title's counts are these), but one as long as a context
    // creation is start-up (cuda_api_bound's), not churn's cost.
    by_name[std::string(name)]++;
    const int64_t duration = a.end_ns - a.start_ns;
    if (IsStartup(DriverWorkOf(name, duration), duration)) continue;
    spans.push_back({a.start_ns, a.end_ns});
  }
  const auto& b = ctx.breakdown;
  const uint64_t ops = b.alloc_count() + b.free_count();
  if (calls < kMinAllocatorCalls && ops < kMinMemoryOps) return std::nullopt;

  // Only allocator time that leaves the GPU idle is lost (cudaFree first waits for the GPU to
  // finish, and that wait overlaps useful GPU work).
  std::vector<Interval> gpu;
  for (const auto& k : ctx.events.kernels) gpu.push_back({k.start_ns, k.end_ns});
  for (const auto& m : ctx.events.memcpys) gpu.push_back({m.start_ns, m.end_ns});
  for (const auto& m : ctx.events.memsets) gpu.push_back({m.start_ns, m.end_ns});
  const IntervalSet idle = IntervalSet::Union(std::move(gpu)).GapsWithin(ctx.window());
  // Calls on several threads overlap: their time is a union, within the step.
  const IntervalSet in_allocator = IntervalSet::Union(std::move(spans)).Clip(ctx.window());
  const int64_t call_ns = in_allocator.TotalLength();
  const int64_t lost = in_allocator.Intersect(idle).TotalLength();
  // The title counts what the evidence lists: the allocator calls. MEMORY2 records (where
  // captured) count the driver's allocations, which need not match one for one (a free whose
  // call began in the previous step, pool operations): they are evidence of their own, and the
  // count only when no call was recorded (API tracing off).
  const bool from_calls = calls > 0;
  const uint64_t allocs = from_calls ? malloc_calls : b.alloc_count();
  const uint64_t frees = from_calls ? calls - malloc_calls : b.free_count();
  auto plural = [](uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };

  v1::Finding f;
  f.set_detector(v1::alloc_churn);
  f.set_title(from_calls ? plural(allocs, "allocation call", "allocation calls") + " and " +
                               plural(frees, "free call", "free calls") + " in one step (" +
                               FormatMs(call_ns) + " in allocator calls)"
                         : plural(allocs, "device allocation", "device allocations") + " and " +
                               plural(frees, "free", "frees") + " in one step (memory records)");
  f.set_lost_ns(lost);
  f.set_severity(SeverityFor(ctx.ShareOfWall(lost)));
  AddEvidence(&f, "allocator_calls", Count(calls), " = " + FormatMs(call_ns));
  AddEvidence(&f, "gpu_idle_in_allocator", Ns(lost));
  if (ops > 0) {
    AddEvidence(&f, "memory_records", Count(b.alloc_count()),
                " allocations, " + std::to_string(b.free_count()) + " frees (the driver's records)");
  }
  AddEvidence(&f, "allocated", Bytes(b.alloc_bytes()));
  AddEvidence(&f, "freed", Bytes(b.free_bytes()));
  for (const auto& [name, n] : by_name) AddEvidence(&f, "api", name + " x", Count(n));
  // Where the allocator is called from: the line with empty_cache() or the changing shape.
  const std::vector<CallSiteCount> sites = CallSitesOf(
      ctx.events, ctx.strings, ctx.window(),
      [&](const ApiEvent& a) { return IsDeviceAllocatorApi(ctx.strings.Get(a.name)); },
      kListedAllocatorSites);
  for (const CallSiteCount& c : sites) AddCallSiteEvidence(&f, "call_site", c);
  const std::string hint =
      "let PyTorch's caching allocator reuse memory: remove torch.cuda.empty_cache() from the "
      "loop, keep tensor shapes stable (pad variable lengths to buckets), and consider "
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation";
  f.set_fix_hint(sites.empty() ? hint
                               : sites[0].site + " calls the allocator " +
                                     std::to_string(sites[0].calls) + "x in this step: " + hint);
  return f;
}

}  // namespace gpuspy::analysis
