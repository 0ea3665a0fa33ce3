// Sync stall: the host waits for the GPU (explicit syncs, blocking copies, cudaFree), which
// drains the launch queue: after each such call the GPU idles until Python enqueues new work.
#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/call_site_summary.h"
#include "analysis/blocking_calls.h"
#include "analysis/detectors/detectors.h"

namespace gpuspy::analysis {
namespace {

// The syncs matter (SyncsMatter: blocked for kMinBlockedShare of the step or in
// kManyBlockingCalls calls), and the GPU idles because of them for at least this share of it.
constexpr double kMinLostShare = 0.05;
constexpr size_t kListedSites = 5;  // call sites of blocking calls in the evidence

struct ApiStat {
  int count = 0;
  int64_t total_ns = 0;
};

// "cudaStreamSynchronize_v3020" -> "cudaStreamSynchronize"
std::string BaseName(std::string_view name) {
  const size_t v = name.rfind("_v");
  if (v != std::string_view::npos && v + 2 < name.size() &&
      std::all_of(name.begin() + v + 2, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    name = name.substr(0, v);
  }
  return std::string(name);
}

std::string HintFor(const std::string& api) {
  if (api.find("Free") != std::string::npos || api.find("Malloc") != std::string::npos) {
    return "cudaFree/cudaMalloc synchronize the device: avoid torch.cuda.empty_cache() in the "
           "loop and keep tensor shapes stable so the caching allocator can reuse blocks";
  }
  if (api == "cudaDeviceSynchronize" || api == "cuCtxSynchronize") {
    return "remove torch.cuda.synchronize() from the training loop (it is only needed around "
           "timing code); let the GPU run ahead of the host";
  }
  if (api.find("Memcpy") != std::string::npos) {
    return "blocking device->host copies (.item(), .cpu(), .tolist(), print(tensor)) stall the "
           "pipeline: keep values on the GPU, read them every N steps, or copy with "
           "non_blocking=True into pinned memory";
  }
  return "each .item()/.cpu()/print(loss) waits for the GPU to drain: accumulate metrics on the "
         "GPU and read them every N steps instead of every step";
}

}  // namespace

std::optional<v1::Finding> DetectSyncStall(const StepContext& ctx) {
  const Interval w = ctx.window();
  std::vector<Interval> blocked, allocator;
  std::map<std::string, ApiStat> by_api;
  absl::flat_hash_map<uint32_t, int> by_thread;
  absl::flat_hash_set<const ApiEvent*> sync_calls;
  for (const BlockingCall& c : ctx.idle.blocking_calls) {
    // Allocator calls block too, but they are alloc_churn's evidence, not a sync pattern.
    if (c.allocator) {
      allocator.push_back(c.span);
      continue;
    }
    blocked.push_back(c.span);
    std::string name;
    if (c.api != nullptr) {
      name = BaseName(ctx.strings.Get(c.api->name));
      by_thread[c.api->thread_id]++;
      sync_calls.insert(c.api);
    } else {
      name = c.sync_kind == SyncKind::kContext ? "cudaDeviceSynchronize"
             : c.sync_kind == SyncKind::kEvent ? "cudaEventSynchronize"
                                               : "cudaStreamSynchronize";
    }
    ApiStat& s = by_api[name];
    s.count++;
    s.total_ns += c.span.length();
  }
  if (blocked.empty()) return std::nullopt;

  // Lost: the idle attribution's sync time (blocked, and the drain after each blocking call),
  // less what only allocator calls blocked (alloc_churn's).
  const IntervalSet blocked_set = IntervalSet::Union(blocked).Clip(w);
  const IntervalSet allocator_only = IntervalSet::Union(std::move(allocator)).Clip(w).Subtract(blocked_set);
  const int64_t lost = ctx.idle.sync_blocked.Subtract(allocator_only).TotalLength();
  const int64_t blocked_ns = blocked_set.TotalLength();
  int calls = 0;
  for (const auto& [name, s] : by_api) calls += s.count;
  // A GPU-bound loop also waits in its one .item() per step, but the GPU is busy meanwhile and
  // nothing is lost: only blocking that leaves the GPU idle counts.
  if (!ctx.idle.syncs_matter || ctx.ShareOfWall(lost) < kMinLostShare) return std::nullopt;

  auto top = std::max_element(by_api.begin(), by_api.end(), [](const auto& a, const auto& b) {
    return a.second.total_ns < b.second.total_ns;
  });
  v1::Finding f;
  f.set_detector("sync_stall");
  f.set_title("host blocked on the GPU " + std::to_string(calls) + "x (" + FormatMs(blocked_ns) +
              ", " + FormatPercent(ctx.ShareOfWall(blocked_ns)) + " of the step), mostly in " +
              top->first);
  f.set_lost_ns(lost);
  f.set_severity(SeverityName(SeverityFor(ctx.ShareOfWall(lost))));
  for (const auto& [name, s] : by_api) {
    AddEvidence(&f, "blocking_api", name + " x" + std::to_string(s.count) + " = ",
                Ns(s.total_ns));
  }
  AddEvidence(&f, "host_blocked", Ns(blocked_ns),
              " (" + Render(Fraction(ctx.ShareOfWall(blocked_ns))) + " of step)");
  AddEvidence(&f, "gpu_idle_from_syncs", Ns(lost));
  AddEvidence(&f, "threads", Count(by_thread.size()));
  const std::vector<CallSiteCount> sites = CallSitesOf(
      ctx.events, ctx.strings, w, [&](const ApiEvent& a) { return sync_calls.contains(&a); },
      kListedSites);
  for (const CallSiteCount& c : sites) AddCallSiteEvidence(&f, "call_site", c);
  // Where to change it, first: the line that blocks most often.
  f.set_fix_hint(sites.empty() ? HintFor(top->first)
                               : sites[0].site + " blocks " + std::to_string(sites[0].calls) +
                                     "x in this step (" + FormatMs(sites[0].call_ns) + "): " +
                                     HintFor(top->first));
  return f;
}

}  // namespace gpuspy::analysis
