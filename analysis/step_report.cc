#include "analysis/step_report.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/api_classifier.h"
#include "analysis/api_name_memo.h"
#include "analysis/blocking_calls.h"
#include "analysis/data_quality.h"
#include "analysis/idle_attribution.h"
#include "analysis/detectors/detectors.h"
#include "analysis/intervals.h"
#include "analysis/kernel_classifier.h"
#include "analysis/kernel_composition.h"
#include "analysis/replay/what_if.h"
#include "analysis/step_source.h"
#include "analysis/stats.h"

namespace gpuspy::analysis {
namespace {

void AddTopKernels(const EventColumns& ev, const StringTable& strings, const Interval& w,
                   KernelClasses& classes, v1::StepReport* report) {
  struct Acc {
    uint64_t count = 0;
    int64_t total_ns = 0;
    std::vector<int64_t> durations;
  };
  absl::flat_hash_map<StringRef, Acc> by_name;
  for (const KernelEvent& k : ev.kernels) {
    if (!InWindow(k.start_ns, k.end_ns, w)) continue;
    Acc& a = by_name[k.name];
    a.count++;
    a.total_ns += k.end_ns - k.start_ns;
    a.durations.push_back(k.end_ns - k.start_ns);
  }
  std::vector<std::pair<StringRef, Acc*>> ranked;
  ranked.reserve(by_name.size());
  for (auto& [name, acc] : by_name) ranked.emplace_back(name, &acc);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second->total_ns != b.second->total_ns ? a.second->total_ns > b.second->total_ns
                                                    : a.first < b.first;
  });
  if (ranked.size() > static_cast<size_t>(kTopKernels)) ranked.resize(kTopKernels);
  for (const auto& [name, acc] : ranked) {
    auto* ks = report->add_top_kernels();
    ks->set_name(std::string(strings.Get(name)));
    ks->set_count(acc->count);
    ks->set_total_ns(acc->total_ns);
    ks->set_median_ns(stats::Median(acc->durations));
    ks->set_tensor_cores(classes.Of(strings, name) == KernelClass::kTensorCoreMath);
  }
}

// The all-reduce tail after backward: the step's last stretch of communication that no compute
// overlaps (exposed pieces separated by less than kTailMergeNs of other work count as one).
constexpr int64_t kTailMergeNs = 100'000;

int64_t ExposedTailNs(const IntervalSet& exposed) {
  const auto& v = exposed.intervals();
  int64_t tail = 0;
  for (size_t i = v.size(); i-- > 0;) {
    tail += v[i].length();
    if (i == 0 || v[i].start_ns - v[i - 1].end_ns >= kTailMergeNs) break;
  }
  return tail;
}

void RunDetectors(const EventColumns& ev, const StringTable& strings, const StepWindow& step,
                  const IdleAttribution& idle, KernelClasses& classes,
                  const std::vector<ClassifiedKernel>& kernels, v1::StepReport* report) {
  const StepContext ctx{ev, strings, step, report->breakdown(), idle, classes, kernels};
  std::vector<v1::Finding> findings;
  for (StepDetector detect : AllStepDetectors()) {
    if (std::optional<v1::Finding> f = detect(ctx)) findings.push_back(std::move(*f));
  }
  MergeOverlappingFindings(ctx, &findings);
  if (findings.empty()) {
    if (std::optional<v1::Finding> f = DetectGpuIdle(ctx)) findings.push_back(std::move(*f));
  }
  // Each finding's lost time is what its fix would save: the step replayed with the fix.
  replay::ApplyWhatIfs(ctx, &findings, report->mutable_replay());
  std::stable_sort(findings.begin(), findings.end(),
                   [](const v1::Finding& a, const v1::Finding& b) { return a.lost_ns() > b.lost_ns(); });
  for (auto& f : findings) *report->add_findings() = std::move(f);
  // A step whose recording cannot carry a verdict leads with saying so (data_quality.h).
  *report->mutable_data_quality() = AssessDataQuality(ev, strings, step, report->breakdown());
  if (report->data_quality().insufficient()) {
    AddInsufficientDataFinding(report);
    auto* all = report->mutable_findings();
    std::rotate(all->begin(), all->end() - 1, all->end());
  }
  if (report->findings().empty()) {
    report->set_primary_bottleneck(v1::none);
  } else {
    report->set_primary_bottleneck(report->findings(0).detector());
  }
  MarkWindowFindings(report);
}

}  // namespace

std::vector<std::string> DistinctKernelNames(const EventColumns& ev, const StringTable& strings,
                                             const StepWindow& step) {
  const Interval w{step.start_ns, step.end_ns};
  absl::flat_hash_set<StringRef> refs;
  for (const KernelEvent& k : ev.kernels) {
    if (InWindow(k.start_ns, k.end_ns, w)) refs.insert(k.name);
  }
  std::vector<std::string> names;
  names.reserve(refs.size());
  for (StringRef r : refs) names.emplace_back(strings.Get(r));
  std::sort(names.begin(), names.end());
  return names;
}

v1::StepReport BuildStepReport(const EventColumns& ev, const StringTable& strings,
                               const StepWindow& step, uint64_t process_id) {
  KernelClasses classes;
  return BuildStepReport(ev, strings, step, process_id, classes);
}

v1::StepReport BuildStepReport(const EventColumns& ev, const StringTable& strings,
                               const StepWindow& step, uint64_t process_id, KernelClasses& classes) {
  v1::StepReport report;
  auto* s = report.mutable_step();
  s->set_process_id(process_id);
  s->set_number(step.number);
  s->set_start_ns(step.start_ns);
  s->set_end_ns(step.end_ns);
  s->set_source(step.source);
  // A time window is no iteration of the program: nothing steady can be said of it.
  report.set_steady_state(!IsTimeWindow(step.source));

  const Interval w{step.start_ns, step.end_ns};
  auto* b = report.mutable_breakdown();
  b->set_wall_ns(w.length());

  std::vector<Interval> kernels, copies, sets, all_gpu, sync_blocked, launches;
  std::vector<Interval> copies_by_kind[6];
  std::vector<int64_t> kernel_durations;
  uint64_t events_in_window = 0;

  std::vector<Interval> communication, compute;
  for (const KernelEvent& k : ev.kernels) {
    if (!InWindow(k.start_ns, k.end_ns, w)) continue;
    ++events_in_window;
    kernels.push_back({k.start_ns, k.end_ns});
    (classes.IsCommunication(strings, k.name) ? communication : compute).push_back({k.start_ns, k.end_ns});
    kernel_durations.push_back(k.end_ns - k.start_ns);
  }
  for (const MemcpyEvent& m : ev.memcpys) {
    if (!InWindow(m.start_ns, m.end_ns, w)) continue;
    ++events_in_window;
    copies.push_back({m.start_ns, m.end_ns});
    copies_by_kind[static_cast<int>(m.copy_kind) % 6].push_back({m.start_ns, m.end_ns});
    b->set_memcpy_count(b->memcpy_count() + 1);
    b->set_memcpy_bytes(b->memcpy_bytes() + m.bytes);
  }
  // Whole-graph records (when enabled instead of per-node kernels) keep the GPU busy too.
  for (const GraphLaunchEvent& g : ev.graph_launches) {
    if (!InWindow(g.start_ns, g.end_ns, w)) continue;
    ++events_in_window;
    kernels.push_back({g.start_ns, g.end_ns});
    compute.push_back({g.start_ns, g.end_ns});
  }
  for (const MemsetEvent& m : ev.memsets) {
    if (!InWindow(m.start_ns, m.end_ns, w)) continue;
    ++events_in_window;
    sets.push_back({m.start_ns, m.end_ns});
    b->set_memset_count(b->memset_count() + 1);
  }
  for (const SyncEvent& y : ev.syncs) {
    if (!InWindow(y.start_ns, y.end_ns, w)) continue;
    ++events_in_window;
    b->set_sync_count(b->sync_count() + 1);
  }
  ApiNameMemo is_launch(strings, IsLaunchApi);
  for (const ApiEvent& a : ev.apis) {
    if (!InWindow(a.start_ns, a.end_ns, w)) continue;
    ++events_in_window;
    b->set_api_call_count(b->api_call_count() + 1);
    if (is_launch(a.name)) launches.push_back({a.start_ns, a.end_ns});
  }
  for (const MemoryEvent& m : ev.memory) {
    if (!InWindow(m.timestamp_ns, m.timestamp_ns, w)) continue;
    ++events_in_window;
    if (m.op == MemoryOpKind::kAlloc) {
      b->set_alloc_count(b->alloc_count() + 1);
      b->set_alloc_bytes(b->alloc_bytes() + m.bytes);
    } else if (m.op == MemoryOpKind::kFree) {
      b->set_free_count(b->free_count() + 1);
      b->set_free_bytes(b->free_bytes() + m.bytes);
    }
  }
  for (const auto& r : ev.nvtx_ranges) events_in_window += InWindow(r.start_ns, r.end_ns, w);
  for (const auto& m : ev.nvtx_marks) {
    events_in_window += InWindow(m.timestamp_ns, m.timestamp_ns, w);
  }
  for (const auto& o : ev.overheads) events_in_window += InWindow(o.start_ns, o.end_ns, w);
  report.set_event_count(events_in_window);

  all_gpu.insert(all_gpu.end(), kernels.begin(), kernels.end());
  all_gpu.insert(all_gpu.end(), copies.begin(), copies.end());
  all_gpu.insert(all_gpu.end(), sets.begin(), sets.end());

  compute.insert(compute.end(), copies.begin(), copies.end());
  compute.insert(compute.end(), sets.begin(), sets.end());
  const IntervalSet comm_set = IntervalSet::Union(std::move(communication)).Clip(w);
  const IntervalSet compute_set = IntervalSet::Union(std::move(compute)).Clip(w);
  b->set_communication_ns(comm_set.TotalLength());
  b->set_compute_busy_ns(compute_set.TotalLength());
  b->set_exposed_comm_ns(comm_set.Subtract(compute_set).TotalLength());
  if (!comm_set.empty()) {
    report.mutable_comm()->set_rank(-1);
    report.mutable_comm()->set_waited_for_rank(-1);
    report.mutable_comm()->set_tail_ns(ExposedTailNs(comm_set.Subtract(compute_set)));
    report.mutable_comm()->set_comm_ns(comm_set.TotalLength());
    report.mutable_comm()->set_exposed_ns(b->exposed_comm_ns());
  }
  const IntervalSet kernel_set = IntervalSet::Union(std::move(kernels)).Clip(w);
  const IntervalSet copy_set = IntervalSet::Union(std::move(copies)).Clip(w);
  const IntervalSet busy_set = IntervalSet::Union(std::move(all_gpu)).Clip(w);
  const IdleAttribution idle = AttributeIdle(ev, strings, w, busy_set);
  for (const BlockingCall& c : idle.blocking_calls) sync_blocked.push_back(c.span);
  const IntervalSet sync_set = IntervalSet::Union(std::move(sync_blocked)).Clip(w);
  const IntervalSet launch_set = IntervalSet::Union(std::move(launches)).Clip(w);

  b->set_kernel_ns(kernel_set.TotalLength());
  b->set_memcpy_ns(copy_set.TotalLength());
  b->set_memset_ns(IntervalSet::Union(std::move(sets)).Clip(w).TotalLength());
  b->set_memcpy_htod_ns(IntervalSet::Union(copies_by_kind[1]).Clip(w).TotalLength());
  b->set_memcpy_dtoh_ns(IntervalSet::Union(copies_by_kind[2]).Clip(w).TotalLength());
  b->set_memcpy_dtod_ns(IntervalSet::Union(copies_by_kind[3]).Clip(w).TotalLength());
  b->set_memcpy_ptop_ns(IntervalSet::Union(copies_by_kind[5]).Clip(w).TotalLength());
  b->set_memcpy_not_overlapped_ns(copy_set.Subtract(kernel_set).TotalLength());
  b->set_gpu_busy_ns(busy_set.TotalLength());
  b->set_gpu_idle_ns(w.length() - busy_set.TotalLength());
  b->set_host_sync_blocked_ns(sync_set.TotalLength());
  b->set_launch_api_ns(launch_set.TotalLength());

  b->set_kernel_count(kernel_durations.size());
  b->set_kernel_median_ns(stats::Median(kernel_durations));
  b->set_kernel_p90_ns(stats::Percentile(kernel_durations, 0.9));

  // GPU idle by cause (idle_attribution.h): the five parts sum to gpu_idle_ns.
  b->set_idle_sync_blocked_ns(idle.sync_blocked.TotalLength());
  b->set_idle_launch_bound_ns(idle.launch_bound.TotalLength());
  b->set_idle_input_ns(idle.input.TotalLength());
  b->set_idle_host_other_ns(idle.host_other.TotalLength());
  b->set_idle_cuda_call_ns(idle.cuda_call.TotalLength());

  AddTopKernels(ev, strings, w, classes, &report);
  // The step's kernels, classified once: the composition and every detector read this list.
  const std::vector<ClassifiedKernel> classified = ClassifiedKernels(ev, strings, w, classes);
  for (v1::KernelClassTime& c : KernelComposition(classified)) {
    *report.add_kernel_classes() = std::move(c);
  }
  RunDetectors(ev, strings, step, idle, classes, classified, &report);
  return report;
}

}  // namespace gpuspy::analysis
