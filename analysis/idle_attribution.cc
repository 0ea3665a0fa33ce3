#include "analysis/idle_attribution.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "analysis/api_classifier.h"
#include "analysis/api_name_memo.h"
#include "analysis/step_report.h"

namespace gpuspy::analysis {
namespace {

// Lower-case fragments of input-pipeline range names.
constexpr std::string_view kInputRangeFragments[] = {"dataloader", "data_load", "dataset"};

// The step's first sign of CUDA work: a CUDA call or GPU activity (window end when none).
int64_t FirstCudaActivity(const EventColumns& ev, const IntervalSet& busy, Interval w) {
  int64_t first = busy.empty() ? w.end_ns : busy.intervals().front().start_ns;
  for (const ApiEvent& a : ev.apis) {
    // A call that ended as the step began (the last step's final sync) is not this step's.
    if (a.start_ns < w.end_ns && a.end_ns > w.start_ns) first = std::min(first, a.start_ns);
  }
  return std::max(first, w.start_ns);
}

// The calls in which the host is doing the driver's own work, with nothing on the GPU to wait
// for (idle_attribution.h). `gpu` is the busy set; `launch_calls` the window's launch calls.
std::vector<DriverCall> FindDriverCalls(const EventColumns& ev, Interval w,
                                        const std::vector<BlockingCall>& blocking, const IntervalSet& gpu,
                                        const std::vector<const ApiEvent*>& launch_calls) {
  std::vector<DriverCall> out;
  absl::flat_hash_set<const ApiEvent*> blocking_apis;
  for (const BlockingCall& c : blocking) {
    if (c.api != nullptr) blocking_apis.insert(c.api);
    if (!c.allocator || c.api == nullptr) continue;
    // cudaFree waits for the device first: its driver work starts once that work is done.
    const IntervalSet under = gpu.Intersect(IntervalSet::Union({c.span}));
    const int64_t from = under.empty() ? c.span.start_ns
                                       : under.intervals().back().end_ns + kWaitReturnSlackNs;
    const Interval tail{std::max(c.span.start_ns, from), c.span.end_ns};
    if (tail.length() >= kMinDriverCallNs) out.push_back({c.api, tail});
  }
  // The GPU waits for the threads that feed it: a pin-memory or other side thread in the driver
  // while the launching thread runs Python is not why the GPU idles. (No launch in the window:
  // any thread.)
  const absl::flat_hash_set<const ApiEvent*> launches(launch_calls.begin(), launch_calls.end());
  absl::flat_hash_set<uint32_t> launching;
  for (const ApiEvent* a : launch_calls) launching.insert(a->thread_id);
  for (const ApiEvent& a : ev.apis) {
    // Length first: almost every call is far shorter than any driver work.
    if (a.end_ns - a.start_ns < kMinDriverCallNs || !InWindow(a.start_ns, a.end_ns, w)) continue;
    if (blocking_apis.contains(&a) || (!launching.empty() && !launching.contains(a.thread_id))) continue;
    if (launches.contains(&a) && a.end_ns - a.start_ns < kMinSlowLaunchNs) continue;
    out.push_back({&a, {std::max(a.start_ns, w.start_ns), std::min(a.end_ns, w.end_ns)}});
  }
  return out;
}

}  // namespace

bool IsInputRange(std::string_view name) {
  // Compared letter by letter, not on a lower-cased copy: asked for every op of every step.
  const auto same_letter = [](char a, char lower) { return absl::ascii_tolower(static_cast<unsigned char>(a)) == lower; };
  for (std::string_view f : kInputRangeFragments) {
    if (std::search(name.begin(), name.end(), f.begin(), f.end(), same_letter) != name.end()) return true;
  }
  return false;
}

namespace {

// The recording's own span and range-profiler ranges say nothing about the host's work.
bool IsActivityDomain(std::string_view domain) {
  return domain != kCaptureDomain && domain != kRangeProfilerDomain;
}

// A range inside the window, not enclosing all of it.
bool IsActivitySpan(const NvtxRangeEvent& r, Interval w) {
  if (r.start_ns <= w.start_ns && r.end_ns >= w.end_ns) return false;
  return r.end_ns > r.start_ns && InWindow(r.start_ns, r.end_ns, w);
}

}  // namespace

bool IsActivityRange(const NvtxRangeEvent& r, const StringTable& strings, Interval w) {
  return IsActivityDomain(strings.Get(r.domain)) && IsActivitySpan(r, w);
}

bool ActivityRangeFilter::operator()(const NvtxRangeEvent& r) {
  if (!known_ || r.domain != last_domain_) {
    known_ = true;
    last_domain_ = r.domain;
    last_domain_counts_ = IsActivityDomain(strings_.Get(r.domain));
  }
  return last_domain_counts_ && IsActivitySpan(r, window_);
}

IntervalSet GpuBusy(const EventColumns& ev, Interval w) {
  std::vector<Interval> busy;
  for (const auto& k : ev.kernels) busy.push_back({k.start_ns, k.end_ns});
  for (const auto& g : ev.graph_launches) busy.push_back({g.start_ns, g.end_ns});
  for (const auto& m : ev.memcpys) busy.push_back({m.start_ns, m.end_ns});
  for (const auto& m : ev.memsets) busy.push_back({m.start_ns, m.end_ns});
  return IntervalSet::Union(std::move(busy)).Clip(w);
}

IdleAttribution AttributeIdle(const EventColumns& ev, const StringTable& strings, Interval w) {
  return AttributeIdle(ev, strings, w, GpuBusy(ev, w));
}

IdleAttribution AttributeIdle(const EventColumns& ev, const StringTable& strings, Interval w,
                              const IntervalSet& busy) {
  IdleAttribution out;
  out.idle = busy.GapsWithin(w);
  out.blocking_calls = FindBlockingCalls(ev, strings, w);
  std::vector<const ApiEvent*> launch_calls;
  ApiNameMemo is_launch(strings, IsLaunchApi);
  for (const ApiEvent& a : ev.apis) {
    if (InWindow(a.start_ns, a.end_ns, w) && is_launch(a.name)) launch_calls.push_back(&a);
  }
  out.driver_calls = FindDriverCalls(ev, w, out.blocking_calls, busy, launch_calls);
  std::vector<Interval> driver;
  for (const DriverCall& c : out.driver_calls) driver.push_back(c.span);
  out.cuda_call = out.idle.Intersect(IntervalSet::Union(std::move(driver)));
  // The rest of the attribution divides what the driver's own work leaves.
  const IntervalSet idle = out.idle.Subtract(out.cuda_call);
  std::vector<Interval> sync, launches;
  for (const ApiEvent* a : launch_calls) launches.push_back({a->start_ns, a->end_ns});
  for (const BlockingCall& c : out.blocking_calls) {
    // A cudaFree with no GPU work under it emptied no queue: nothing after it is its drain.
    if (c.allocator && busy.Intersect(IntervalSet::Union({c.span})).empty()) continue;
    sync.push_back(c.span);
  }
  const IntervalSet sync_set = IntervalSet::Union(std::move(sync)).Clip(w);
  out.sync_blocked = idle.Intersect(sync_set);
  const IntervalSet rest = idle.Subtract(sync_set);

  // The drain after each blocking call: from its end to the next GPU work, at most the host's
  // lead; only when the step's syncs matter (blocking_calls.h), else what the host does next is
  // its own. The lead is how far ahead of the GPU the host would be had it not waited: the GPU
  // work the calls waited for, less the GPU idle since (which that work would have filled), so a
  // sync right after another (.item(), then a pageable copy) carries the first one's lead. Host
  // work after the sync beyond the lead leaves the GPU idle with or without the sync: it is host
  // work (`.item()`, then 30 ms of CPU metrics: the sync costs what the forward pass before it
  // hid, the metrics the rest).
  std::vector<Interval> drain;
  const auto& gpu = busy.intervals();  // sorted, disjoint
  const std::vector<Interval> no_drains;
  out.syncs_matter = SyncsMatter(out.blocking_calls, w);
  int64_t lead_ns = 0, previous_end = w.start_ns;
  for (const Interval& b : out.syncs_matter ? sync_set.intervals() : no_drains) {
    const int64_t idle_since = out.idle.Intersect(IntervalSet::Union({{previous_end, b.start_ns}})).TotalLength();
    lead_ns = std::max<int64_t>(0, lead_ns - idle_since) + busy.Intersect(IntervalSet::Union({b})).TotalLength();
    previous_end = b.end_ns;
    auto next = std::upper_bound(gpu.begin(), gpu.end(), b.end_ns,
                                 [](int64_t t, const Interval& g) { return t < g.end_ns; });
    const int64_t next_gpu = next == gpu.end() ? w.end_ns : std::max(next->start_ns, b.end_ns);
    const int64_t drain_end = std::min(next_gpu, b.end_ns + lead_ns);
    if (drain_end > b.end_ns) drain.push_back({b.end_ns, drain_end});
  }
  const IntervalSet drain_set = IntervalSet::Union(std::move(drain));

  // A short gap right after a sync is the drain, not launch latency: only gaps the sync did
  // not cause count as launch-bound by length.
  std::vector<Interval> launch_bound =
      rest.Intersect(IntervalSet::Union(std::move(launches)).Clip(w)).intervals();
  const IntervalSet not_drained = rest.Subtract(drain_set);
  for (const Interval& g : not_drained.intervals()) {
    if (g.length() < kLaunchGapNs && g.start_ns > w.start_ns && g.end_ns < w.end_ns) {
      launch_bound.push_back(g);
    }
  }
  out.launch_bound = IntervalSet::Union(std::move(launch_bound));
  const IntervalSet host = rest.Subtract(out.launch_bound);

  // Input: data-loading ranges, and the unexplained host time before the first CUDA call.
  std::vector<Interval> input, explained;
  ActivityRangeFilter is_activity(strings, w);
  absl::flat_hash_map<StringRef, bool> is_input;  // per name: a step repeats its ops' names
  for (const NvtxRangeEvent& r : ev.nvtx_ranges) {
    if (!is_activity(r)) continue;
    explained.push_back({r.start_ns, r.end_ns});
    auto [it, fresh] = is_input.try_emplace(r.message, false);
    if (fresh) it->second = IsInputRange(strings.Get(r.message));
    if (it->second) input.push_back({r.start_ns, r.end_ns});
  }
  const IntervalSet leading =
      IntervalSet::Union({{w.start_ns, FirstCudaActivity(ev, busy, w)}})
          .Subtract(IntervalSet::Union(std::move(explained)));
  IntervalSet input_set = IntervalSet::Union(std::move(input)).Clip(w);
  std::vector<Interval> all_input = input_set.intervals();
  all_input.insert(all_input.end(), leading.intervals().begin(), leading.intervals().end());
  out.input = host.Intersect(IntervalSet::Union(std::move(all_input)));

  // The drain goes to the sync, except where the host is launching or in the input pipeline.
  out.sync_drain = drain_set.Intersect(host.Subtract(out.input));
  std::vector<Interval> sync_all = out.sync_blocked.intervals();
  sync_all.insert(sync_all.end(), out.sync_drain.intervals().begin(), out.sync_drain.intervals().end());
  out.sync_blocked = IntervalSet::Union(std::move(sync_all));
  out.host_other = host.Subtract(out.input).Subtract(out.sync_drain);
  return out;
}

}  // namespace gpuspy::analysis
