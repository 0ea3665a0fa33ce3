// Sync stall: the host waits for the GPU (explicit syncs, blocking copies, cudaFree), which
// drains the launch queue: after each such call the GPU idles until Python enqueues new work.
#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "collector/analysis/blocking_calls.h"
#include "collector/analysis/detectors/detectors.h"

namespace gpuspy::analysis {
namespace {

// Host blocked for at least this share of the step, or this many blocking calls...
constexpr double kMinBlockedShare = 0.10;
constexpr int kManyBlockingCalls = 10;
// ...and the GPU idles because of them for at least this share of the step.
constexpr double kMinLostShare = 0.05;

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
  std::vector<Interval> blocked;
  std::map<std::string, ApiStat> by_api;
  absl::flat_hash_map<uint32_t, int> by_thread;
  std::map<std::string, int> call_sites;
  for (const BlockingCall& c : ctx.idle.blocking_calls) {
    // Allocator calls block too, but they are alloc_churn's evidence, not a sync pattern.
    if (c.allocator) continue;
    blocked.push_back(c.span);
    std::string name;
    if (c.api != nullptr) {
      name = BaseName(ctx.strings.Get(c.api->name));
      by_thread[c.api->thread_id]++;
      if (c.api->call_site != 0) call_sites[std::string(ctx.strings.Get(c.api->call_site))]++;
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

  // Lost: GPU idle while the host is blocked, plus the drain after each blocking call (from its
  // end to the next GPU work), except where the host is in the input pipeline (input_stall's).
  const IntervalSet blocked_set = IntervalSet::Union(blocked).Clip(w);
  std::vector<Interval> lost_spans = ctx.idle.sync_blocked.intervals();
  lost_spans.insert(lost_spans.end(), ctx.idle.sync_drain.intervals().begin(),
                    ctx.idle.sync_drain.intervals().end());
  const int64_t lost =
      IntervalSet::Union(std::move(lost_spans)).Subtract(ctx.idle.input).TotalLength();
  const int64_t blocked_ns = blocked_set.TotalLength();
  int calls = 0;
  for (const auto& [name, s] : by_api) calls += s.count;
  // A GPU-bound loop also waits in its one .item() per step, but the GPU is busy meanwhile and
  // nothing is lost: only blocking that leaves the GPU idle counts.
  const bool heavy = ctx.ShareOfWall(blocked_ns) >= kMinBlockedShare;
  const bool frequent = calls >= kManyBlockingCalls;
  if ((!heavy && !frequent) || ctx.ShareOfWall(lost) < kMinLostShare) return std::nullopt;

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
    AddEvidence(&f, "blocking_api",
                name + " x" + std::to_string(s.count) + " = " + FormatMs(s.total_ns));
  }
  AddEvidence(&f, "host_blocked", FormatMs(blocked_ns) + " (" +
                                      FormatPercent(ctx.ShareOfWall(blocked_ns)) + " of step)");
  AddEvidence(&f, "gpu_idle_from_syncs", FormatMs(lost));
  AddEvidence(&f, "threads", std::to_string(by_thread.size()));
  for (const auto& [site, n] : call_sites) {
    AddEvidence(&f, "call_site", site + " x" + std::to_string(n));
  }
  f.set_fix_hint(HintFor(top->first));
  return f;
}

}  // namespace gpuspy::analysis
