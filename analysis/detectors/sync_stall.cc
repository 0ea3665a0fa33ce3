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
constexpr size_t kListedBlockingSites = 5;  // call sites of blocking calls in the evidence

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

// The copies behind the blocking copy calls, by direction.
struct CopyDirections {
  int h2d = 0, d2h = 0;
  int64_t h2d_ns = 0, d2h_ns = 0;  // host time blocked in the calls
};

std::string BlockingCallHint(const std::string& api, const CopyDirections& copies) {
  if (api.find("Free") != std::string::npos || api.find("Malloc") != std::string::npos) {
    return "cudaFree/cudaMalloc synchronize the device: avoid torch.cuda.empty_cache() in the "
           "loop and keep tensor shapes stable so the caching allocator can reuse blocks";
  }
  if (api == "cudaDeviceSynchronize" || api == "cuCtxSynchronize") {
    return "remove torch.cuda.synchronize() from the training loop (it is only needed around "
           "timing code); let the GPU run ahead of the host";
  }
  if (api.find("Memcpy") != std::string::npos) {
    // The fix depends on the direction: .item()/.cpu() are device->host; a host->device copy
    // blocks because its source is pageable (staged by the driver) or the call is synchronous.
    const std::string d2h =
        "blocking device->host copies (.item(), .cpu(), .tolist(), print(tensor)) stall the "
        "pipeline: keep values on the GPU, read them every N steps, or copy with "
        "non_blocking=True into pinned memory";
    const std::string h2d =
        "blocking host->device copies stall the pipeline: a copy from pageable memory is staged "
        "synchronously by the driver; pin the source (DataLoader pin_memory=True, "
        "tensor.pin_memory()) and copy with .to(device, non_blocking=True), and move tensors that "
        "do not change (weights, constants) to the GPU once, before the loop";
    if (copies.h2d > 0 && copies.d2h == 0) return h2d;
    if (copies.d2h > 0 && copies.h2d == 0) return d2h;
    if (copies.h2d > 0 && copies.d2h > 0) {
      return copies.h2d_ns >= copies.d2h_ns ? h2d + "; and " + d2h : d2h + "; and " + h2d;
    }
    return "blocking copies stall the pipeline: copy with non_blocking=True between pinned host "
           "memory and the GPU, and read values back (.item(), .cpu()) every N steps, not every step";
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
  absl::flat_hash_map<uint64_t, CopyKind> copy_kind;  // by correlation id
  for (const MemcpyEvent& m : ctx.events.memcpys) {
    if (ctx.InWindow(m.start_ns, m.end_ns)) copy_kind[m.correlation_id] = m.copy_kind;
  }
  CopyDirections copies;
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
      if (auto k = copy_kind.find(c.api->correlation_id); k != copy_kind.end()) {
        if (k->second == CopyKind::kHtoD) {
          ++copies.h2d;
          copies.h2d_ns += c.span.length();
        } else if (k->second == CopyKind::kDtoH) {
          ++copies.d2h;
          copies.d2h_ns += c.span.length();
        }
      }
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
  f.set_detector(v1::sync_stall);
  f.set_title("host blocked on the GPU " + std::to_string(calls) + "x (" + FormatMs(blocked_ns) +
              ", " + FormatPercent(ctx.ShareOfWall(blocked_ns)) + " of the step), mostly in " +
              top->first);
  f.set_lost_ns(lost);
  f.set_severity(SeverityFor(ctx.ShareOfWall(lost)));
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
      kListedBlockingSites);
  for (const CallSiteCount& c : sites) AddCallSiteEvidence(&f, "call_site", c);
  // Where to change it, first: the line that blocks most often.
  f.set_fix_hint(sites.empty() ? BlockingCallHint(top->first, copies)
                               : sites[0].site + " blocks " + std::to_string(sites[0].calls) +
                                     "x in this step (" + FormatMs(sites[0].call_ns) + "): " +
                                     BlockingCallHint(top->first, copies));
  return f;
}

}  // namespace gpuspy::analysis
