#include "analysis/data_quality.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/api_classifier.h"
#include "analysis/step_source.h"
#include "model/units.h"

namespace gpuspy::analysis {
namespace {

bool IsGraphLaunchApi(std::string_view raw) {
  const CudaApiName cuda(raw);  // hipGraphLaunch too
  const std::string_view name = cuda.view();
  return name.starts_with("cudaGraphLaunch") || name.starts_with("cuGraphLaunch");
}

// GPU operations in the window with no launch call among `ev`, and the calls in the window that
// launched recorded GPU work (kMissingLaunchFactor).
struct LaunchCoverage {
  uint64_t ops = 0;
  uint64_t missing = 0;
  uint64_t own_launches = 0;
  uint64_t matched_anywhere = 0;  // GPU records of `ev` whose call is there: launches are recorded
};
LaunchCoverage CoverageOf(const EventColumns& ev, Interval w) {
  absl::flat_hash_set<uint64_t> calls, ran;
  calls.reserve(ev.apis.size());  // sized once: growing them was a good part of a step's check
  ran.reserve(ev.kernels.size() + ev.memcpys.size() + ev.memsets.size() + ev.graph_launches.size());
  for (const ApiEvent& a : ev.apis) calls.insert(a.correlation_id);
  LaunchCoverage c;
  auto add = [&](uint64_t correlation, int64_t start, int64_t end) {
    if (correlation == 0) return;
    ran.insert(correlation);
    if (calls.contains(correlation)) ++c.matched_anywhere;
    if (!InWindow(start, end, w)) return;
    ++c.ops;
    if (!calls.contains(correlation)) ++c.missing;
  };
  for (const KernelEvent& k : ev.kernels) add(k.correlation_id, k.start_ns, k.end_ns);
  for (const MemcpyEvent& m : ev.memcpys) add(m.correlation_id, m.start_ns, m.end_ns);
  for (const MemsetEvent& m : ev.memsets) add(m.correlation_id, m.start_ns, m.end_ns);
  for (const GraphLaunchEvent& g : ev.graph_launches) ran.insert(g.correlation_id);
  for (const ApiEvent& a : ev.apis) {
    if (InWindow(a.start_ns, a.end_ns, w) && ran.contains(a.correlation_id)) ++c.own_launches;
  }
  return c;
}

}  // namespace

void MarkInsufficient(v1::StepReport* report, const std::string& reason) {
  report->mutable_data_quality()->set_insufficient(true);
  report->mutable_data_quality()->add_reasons(reason);
  AddInsufficientDataFinding(report);
}

void AddInsufficientDataFinding(v1::StepReport* report) {
  const v1::DataQuality& q = report->data_quality();
  if (!q.insufficient()) return;
  v1::Finding* f = nullptr;
  for (v1::Finding& existing : *report->mutable_findings()) {
    if (existing.detector() == v1::insufficient_data) f = &existing;
  }
  if (f == nullptr) f = report->add_findings();
  f->Clear();
  f->set_detector(v1::insufficient_data);
  f->set_title(absl::StrCat("insufficient data: ", absl::StrJoin(q.reasons(), "; ")));
  f->set_lost_ns(0);
  f->set_severity(v1::info);
  for (const std::string& r : q.reasons()) {
    auto* e = f->add_evidence();
    e->set_key("reason");
    e->set_value(r);
  }
  f->set_fix_hint("no verdict on this step: the other findings are listed for what they are "
                  "worth; capture whole steps (gpuspy attach --steps N, or a profiler schedule "
                  "with warmup) without other profilers replaying kernels");
}

v1::DataQuality AssessDataQuality(const EventColumns& ev, const StringTable& strings,
                                  const StepWindow& step, const v1::StepBreakdown& b) {
  v1::DataQuality q;
  const Interval w{step.start_ns, step.end_ns};
  auto insufficient = [&](std::string reason) {
    q.set_insufficient(true);
    q.add_reasons(std::move(reason));
  };

  // The recording's own span, where the producer says what it was.
  std::vector<Interval> captured;
  uint64_t profiler_ranges = 0;
  for (const NvtxRangeEvent& r : ev.nvtx_ranges) {
    if (!InWindow(r.start_ns, r.end_ns, w)) continue;
    const std::string_view domain = strings.Get(r.domain);
    if (domain == kCaptureDomain) captured.push_back({r.start_ns, r.end_ns});
    if (domain == kRangeProfilerDomain) ++profiler_ranges;
  }
  if (!captured.empty() && w.length() > 0) {
    const int64_t covered = IntervalSet::Union(std::move(captured)).Clip(w).TotalLength();
    if (covered < kMinCoveredShare * w.length()) {
      insufficient(absl::StrCat("the recording covers ", FormatMs(covered), " of the step's ",
                                FormatMs(w.length()), " (the profiler started or stopped mid-step)"));
    }
  }
  if (profiler_ranges > 0) {
    insufficient(absl::StrCat(profiler_ranges, " CUPTI range-profiler ranges: kernels were "
                              "replayed to collect counters, so their times are not the program's"));
  }

  const bool gpu_work = b.kernel_count() > 0 || b.memcpy_count() > 0 || b.memset_count() > 0 ||
                        b.gpu_busy_ns() > 0;
  if (!gpu_work) {
    insufficient(b.api_call_count() > 0
                     ? absl::StrCat("no GPU work recorded in the step (", b.api_call_count(),
                                    " CUDA calls, none ran anything on the GPU)")
                     : std::string("no GPU work and no CUDA calls recorded in the step"));
  }

  // An excerpt: GPU records whose calls are missing from the recording (kMissingLaunchFactor).
  if (!ev.apis.empty()) {
    const LaunchCoverage c = CoverageOf(ev, w);
    // A producer whose calls never name their GPU work (no correlation recorded) proves nothing.
    if (c.matched_anywhere > 0 && c.missing >= kMinMissingLaunchOps &&
        c.missing > kMissingLaunchFactor * c.own_launches) {
      insufficient(absl::StrCat(c.missing, " of the step's ", c.ops, " GPU operations have no launch "
                                "call in the recording, against ", c.own_launches,
                                " launches of its own: the step's events were cut (an excerpt of a "
                                "longer trace, or a sampled one), and what its host did is not there"));
    }
  }

  // Graph launches whose kernels never show up: the node records were not recorded, and the
  // graph's GPU time looks like idle time.
  const int64_t tail_start = w.end_ns - static_cast<int64_t>(kGraphTailShare * w.length());
  std::vector<uint64_t> graph_launches;  // the window's, before its tail
  for (const ApiEvent& a : ev.apis) {
    if (!InWindow(a.start_ns, a.end_ns, w) || a.end_ns > tail_start) continue;
    if (IsGraphLaunchApi(strings.Get(a.name))) graph_launches.push_back(a.correlation_id);
  }
  uint64_t missing_graphs = 0;
  if (!graph_launches.empty()) {
    absl::flat_hash_set<uint64_t> ran;
    ran.reserve(ev.kernels.size() + ev.graph_launches.size());
    for (const KernelEvent& k : ev.kernels) ran.insert(k.correlation_id);
    for (const GraphLaunchEvent& g : ev.graph_launches) ran.insert(g.correlation_id);
    for (uint64_t c : graph_launches) missing_graphs += ran.contains(c) ? 0 : 1;
  }
  if (missing_graphs > 0) {
    insufficient(absl::StrCat(missing_graphs, " CUDA graph launches without any recorded kernel "
                              "(graph node records missing: the graphs' GPU time looks idle)"));
  }
  q.set_unlaunched_gpu_ns(UnlaunchedGpuNs(ev, w));
  return q;
}

void MarkFirstWindow(v1::StepReport* first) {
  // A marker-delimited step (ProfilerStep#N, an NVTX range) starts where the program says a step
  // starts: the GPU work still running from before is the same overlap every step has. A window
  // found by period or time starts wherever the recording did.
  if (first->step().source().starts_with("nvtx:")) return;
  const int64_t unlaunched = first->data_quality().unlaunched_gpu_ns();
  const int64_t wall = first->breakdown().wall_ns();
  if (wall <= 0 || unlaunched < kMinUnlaunchedShare * wall) return;
  MarkInsufficient(first, absl::StrCat("first window of the recording: ", FormatMs(unlaunched),
                                       " of GPU work launched before the recording began"));
}

void MarkLastPeriodStep(v1::StepReport* last) {
  const uint64_t period = PeriodKernels(last->step().source());
  const uint64_t kernels = last->breakdown().kernel_count();
  if (period == 0 || kernels >= kMinLastPeriodShare * static_cast<double>(period)) return;
  MarkInsufficient(last, absl::StrCat("last window of the recording: ", kernels, " of the period's ",
                                      period, " kernels (the run ended mid-iteration)"));
}

int64_t UnlaunchedGpuNs(const EventColumns& ev, Interval w) {
  absl::flat_hash_set<uint64_t> launched;
  launched.reserve(ev.apis.size());
  for (const ApiEvent& a : ev.apis) launched.insert(a.correlation_id);
  std::vector<Interval> orphans;
  uint64_t matched = 0;  // a producer that records no launch calls at all proves nothing here
  auto add = [&](uint64_t correlation, int64_t start, int64_t end) {
    if (correlation == 0 || !InWindow(start, end, w)) return;
    if (launched.contains(correlation)) {
      ++matched;
    } else {
      orphans.push_back({start, end});
    }
  };
  for (const KernelEvent& k : ev.kernels) add(k.correlation_id, k.start_ns, k.end_ns);
  for (const MemcpyEvent& m : ev.memcpys) add(m.correlation_id, m.start_ns, m.end_ns);
  for (const MemsetEvent& m : ev.memsets) add(m.correlation_id, m.start_ns, m.end_ns);
  return matched == 0 ? 0 : IntervalSet::Union(std::move(orphans)).Clip(w).TotalLength();
}

}  // namespace gpuspy::analysis
