#include "analysis/diff/run_profile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "analysis/comm/collective_op.h"
#include "analysis/detector_names.h"
#include "analysis/kernel_classifier.h"
#include "analysis/step_source.h"
#include "analysis/stats.h"

namespace gpuspy::analysis {
namespace {

int64_t PerStep(int64_t total, size_t n) {
  return n == 0 ? 0 : std::llround(static_cast<double>(total) / static_cast<double>(n));
}
double PerStep(uint64_t total, size_t n) {
  return n == 0 ? 0.0 : static_cast<double>(total) / static_cast<double>(n);
}

// A mean per step and its standard error, from per-step values (steps without one count 0).
struct Moments {
  double sum = 0;
  double sum_sq = 0;
  void Add(double v) {
    sum += v;
    sum_sq += v * v;
  }
  int64_t StandardError(size_t n) const {
    if (n < 2) return 0;
    const double mean = sum / static_cast<double>(n);
    const double var = std::max(0.0, (sum_sq - static_cast<double>(n) * mean * mean) /
                                         static_cast<double>(n - 1));
    return std::llround(std::sqrt(var / static_cast<double>(n)));
  }
};

struct KernelTotal {
  uint64_t calls = 0;
  int64_t ns = 0;
  Moments per_step;
};

struct SiteTotal {
  uint64_t calls = 0;
  int64_t blocked_ns = 0;
  std::map<std::string, uint64_t> apis;
};

// A host site's gap time, keyed by (kind, site).
using HostSiteKey = std::pair<std::string, std::string>;

// Where the step's host_bound finding placed the GPU's wait for the host: its sampled hot lines
// when the sampler caught any (they say what ran), else the call sites that ended the gaps. The
// report's own figures: the diff names the place the step report names.
void AddHostSites(const v1::StepReport& r, std::map<HostSiteKey, int64_t>* out) {
  for (const v1::Finding& f : r.findings()) {
    if (f.detector() != v1::host_bound) continue;
    for (const char* kind : {"hot_line", "resumed_at"}) {
      bool any = false;
      for (const v1::Evidence& e : f.evidence()) {
        if (e.key() != kind || e.call_site().empty() || e.unit() != "ns") continue;
        (*out)[{kind, e.call_site()}] += std::llround(e.quantity());
        any = true;
      }
      if (any) return;
    }
  }
}

// One detector's findings over the compared steps.
struct FindingTotal {
  std::vector<int64_t> lost_ns;  // one per step with such a finding
  uint32_t replayed_steps = 0;
};

// The step's findings into `out`, one per detector: a detector with two findings in a step counts
// its larger one, so that "present in k steps" counts steps, not findings.
void AddFindings(const v1::StepReport& r, std::map<v1::Detector, FindingTotal>* out) {
  std::map<v1::Detector, const v1::Finding*> largest;
  for (const v1::Finding& f : r.findings()) {
    const v1::Finding*& top = largest[f.detector()];
    if (top == nullptr || f.lost_ns() > top->lost_ns()) top = &f;
  }
  for (const auto& [detector, f] : largest) {
    FindingTotal& t = (*out)[detector];
    t.lost_ns.push_back(f->lost_ns());
    if (f->has_what_if()) ++t.replayed_steps;
  }
}

struct CollectiveTotal {
  uint64_t calls = 0;
  int64_t ns = 0;
  std::vector<uint64_t> bytes;  // known sizes only
};

struct PartMoments {
  Moments wall, compute, exposed_comm, idle_sync, idle_launch, idle_input, idle_host, idle_cuda_call;
  void Add(const v1::StepBreakdown& b) {
    wall.Add(static_cast<double>(b.wall_ns()));
    compute.Add(static_cast<double>(b.compute_busy_ns()));
    exposed_comm.Add(static_cast<double>(b.exposed_comm_ns()));
    idle_sync.Add(static_cast<double>(b.idle_sync_blocked_ns()));
    idle_launch.Add(static_cast<double>(b.idle_launch_bound_ns()));
    idle_input.Add(static_cast<double>(b.idle_input_ns()));
    idle_host.Add(static_cast<double>(b.idle_host_other_ns()));
    idle_cuda_call.Add(static_cast<double>(b.idle_cuda_call_ns()));
  }
  v1::WallParts Noise(size_t n) const {
    v1::WallParts p;
    p.set_wall_ns(wall.StandardError(n));
    p.set_compute_ns(compute.StandardError(n));
    p.set_exposed_comm_ns(exposed_comm.StandardError(n));
    p.set_idle_sync_ns(idle_sync.StandardError(n));
    p.set_idle_launch_ns(idle_launch.StandardError(n));
    p.set_idle_input_ns(idle_input.StandardError(n));
    p.set_idle_host_ns(idle_host.StandardError(n));
    p.set_idle_cuda_call_ns(idle_cuda_call.StandardError(n));
    return p;
  }
};

void AddParts(const v1::StepBreakdown& b, v1::WallParts* sum) {
  sum->set_wall_ns(sum->wall_ns() + b.wall_ns());
  sum->set_compute_ns(sum->compute_ns() + b.compute_busy_ns());
  sum->set_exposed_comm_ns(sum->exposed_comm_ns() + b.exposed_comm_ns());
  sum->set_idle_sync_ns(sum->idle_sync_ns() + b.idle_sync_blocked_ns());
  sum->set_idle_launch_ns(sum->idle_launch_ns() + b.idle_launch_bound_ns());
  sum->set_idle_input_ns(sum->idle_input_ns() + b.idle_input_ns());
  sum->set_idle_host_ns(sum->idle_host_ns() + b.idle_host_other_ns());
  sum->set_idle_cuda_call_ns(sum->idle_cuda_call_ns() + b.idle_cuda_call_ns());
}

v1::WallParts MeanParts(const v1::WallParts& sum, size_t n) {
  v1::WallParts m;
  m.set_wall_ns(PerStep(sum.wall_ns(), n));
  m.set_compute_ns(PerStep(sum.compute_ns(), n));
  m.set_exposed_comm_ns(PerStep(sum.exposed_comm_ns(), n));
  m.set_idle_sync_ns(PerStep(sum.idle_sync_ns(), n));
  m.set_idle_launch_ns(PerStep(sum.idle_launch_ns(), n));
  m.set_idle_input_ns(PerStep(sum.idle_input_ns(), n));
  m.set_idle_host_ns(PerStep(sum.idle_host_ns(), n));
  m.set_idle_cuda_call_ns(PerStep(sum.idle_cuda_call_ns(), n));
  return m;
}

}  // namespace

ComparedSelection ComparedSteps(const std::vector<const StepAnalysis*>& steps) {
  const bool any_steady = std::any_of(steps.begin(), steps.end(), [](const StepAnalysis* s) {
    return s->report.steady_state();
  });
  ComparedSelection out;
  out.warmup_included = !any_steady;
  out.compared.reserve(steps.size());
  for (const StepAnalysis* s : steps) out.compared.push_back(!any_steady || s->report.steady_state());
  return out;
}

v1::RunProfile BuildRunProfile(const std::string& label, const std::vector<ProfiledStep>& steps,
                               uint32_t steps_seen, bool warmup_included, uint32_t ranks) {
  v1::RunProfile p;
  p.set_label(label);
  p.set_steps(static_cast<uint32_t>(steps.size()));
  p.set_steps_seen(steps_seen);
  p.set_warmup_included(warmup_included);
  p.set_windows(static_cast<uint32_t>(std::count_if(steps.begin(), steps.end(), [](const ProfiledStep& s) {
    return IsTimeWindow(s.analysis->report.step());
  })));
  p.set_ranks(ranks);
  const size_t n = steps.size();

  v1::WallParts sum;
  PartMoments moments;
  Moments copy_moments;
  absl::flat_hash_map<std::string, KernelTotal> kernels;
  absl::flat_hash_map<std::string, SiteTotal> sites;
  std::map<std::string, CollectiveTotal> collectives;
  std::map<HostSiteKey, int64_t> host_sites;
  std::map<std::string, uint64_t> verdicts;  // by name: equal counts list alphabetically
  std::map<v1::Detector, FindingTotal> findings;
  std::vector<int64_t> all_fixes_gain_ns;  // steps whose replay is available
  uint64_t launches = 0, kernel_count = 0, copies = 0, pageable_copies = 0;
  uint64_t pageable_bytes = 0, pinned_bytes = 0;
  int64_t copy_ns = 0, comm_wait_ns = 0;
  for (const ProfiledStep& s : steps) {
    const v1::StepReport& r = s.analysis->report;
    p.add_step_wall_ns(r.breakdown().wall_ns());
    AddParts(r.breakdown(), &sum);
    moments.Add(r.breakdown());
    copy_moments.Add(static_cast<double>(r.breakdown().memcpy_ns()));
    ++verdicts[DetectorName(r.primary_bottleneck())];
    kernel_count += r.breakdown().kernel_count();
    copy_ns += r.breakdown().memcpy_ns();
    comm_wait_ns += r.breakdown().comm_wait_ns();
    for (const KernelFact& k : s.facts.kernels) {
      KernelTotal& t = kernels[k.name];
      t.calls += k.calls;
      t.ns += k.ns;
      t.per_step.Add(static_cast<double>(k.ns));
    }
    for (const BlockingSiteFact& b : s.facts.blocking_sites) {
      SiteTotal& t = sites[b.site];
      t.calls += b.calls;
      t.blocked_ns += b.blocked_ns;
      t.apis[b.api] += b.calls;
    }
    AddHostSites(r, &host_sites);
    AddFindings(r, &findings);
    if (r.replay().available()) all_fixes_gain_ns.push_back(r.replay().all_fixes_gain_ns());
    launches += s.facts.launches;
    copies += s.facts.copies;
    pageable_copies += s.facts.pageable_copies;
    pageable_bytes += s.facts.pageable_bytes;
    pinned_bytes += s.facts.pinned_bytes;
    for (const StepCollective& c : s.analysis->collectives->ops) {
      CollectiveTotal& t = collectives[std::string(CollectiveOpName(c.op))];
      ++t.calls;
      t.ns += c.duration_ns();
      if (c.bytes > 0) t.bytes.push_back(c.bytes);
    }
  }
  *p.mutable_parts() = MeanParts(sum, n);
  *p.mutable_parts_noise() = moments.Noise(n);
  p.set_launches_per_step(PerStep(launches, n));
  p.set_kernels_per_step(PerStep(kernel_count, n));
  p.set_comm_wait_ns(PerStep(comm_wait_ns, n));

  for (auto& [name, t] : kernels) {
    v1::KernelProfile* k = p.add_kernels();
    k->set_name(name);
    k->set_kernel_class(std::string(KernelClassName(ClassifyKernel(name))));
    k->set_calls_per_step(PerStep(t.calls, n));
    k->set_ns_per_step(PerStep(t.ns, n));
    k->set_mean_ns(t.calls > 0 ? t.ns / static_cast<int64_t>(t.calls) : 0);
    k->set_noise_ns(t.per_step.StandardError(n));
  }
  std::sort(p.mutable_kernels()->begin(), p.mutable_kernels()->end(),
            [](const v1::KernelProfile& a, const v1::KernelProfile& b) {
              return a.ns_per_step() != b.ns_per_step() ? a.ns_per_step() > b.ns_per_step()
                                                        : a.name() < b.name();
            });
  for (auto& [site, t] : sites) {
    v1::BlockingSiteProfile* b = p.add_blocking_sites();
    b->set_site(site);
    const auto top = std::max_element(t.apis.begin(), t.apis.end(), [](const auto& x, const auto& y) {
      return x.second < y.second;
    });
    b->set_api(top->first);
    b->set_calls_per_step(PerStep(t.calls, n));
    b->set_blocked_ns_per_step(PerStep(t.blocked_ns, n));
  }
  std::sort(p.mutable_blocking_sites()->begin(), p.mutable_blocking_sites()->end(),
            [](const v1::BlockingSiteProfile& a, const v1::BlockingSiteProfile& b) {
              return a.blocked_ns_per_step() != b.blocked_ns_per_step()
                         ? a.blocked_ns_per_step() > b.blocked_ns_per_step()
                         : a.site() < b.site();
            });
  for (const auto& [key, ns] : host_sites) {
    v1::HostSiteProfile* h = p.add_host_sites();
    h->set_kind(key.first);
    h->set_site(key.second);
    h->set_ns_per_step(PerStep(ns, n));
  }
  std::stable_sort(p.mutable_host_sites()->begin(), p.mutable_host_sites()->end(),
                   [](const v1::HostSiteProfile& a, const v1::HostSiteProfile& b) {
                     return a.ns_per_step() > b.ns_per_step();
                   });
  for (auto& [op, t] : collectives) {
    v1::CollectiveProfile* c = p.add_collectives();
    c->set_op(op);
    c->set_calls_per_step(PerStep(t.calls, n));
    c->set_ns_per_step(PerStep(t.ns, n));
    if (!t.bytes.empty()) c->set_median_bytes(stats::Median(t.bytes));
  }
  std::sort(p.mutable_collectives()->begin(), p.mutable_collectives()->end(),
            [](const v1::CollectiveProfile& a, const v1::CollectiveProfile& b) {
              return a.ns_per_step() != b.ns_per_step() ? a.ns_per_step() > b.ns_per_step()
                                                        : a.op() < b.op();
            });
  v1::CopyProfile* c = p.mutable_copies();
  c->set_ns_per_step(PerStep(copy_ns, n));
  c->set_noise_ns(copy_moments.StandardError(n));
  c->set_copies_per_step(PerStep(copies, n));
  c->set_pageable_copies_per_step(PerStep(pageable_copies, n));
  c->set_pageable_bytes_per_step(static_cast<uint64_t>(std::llround(PerStep(pageable_bytes, n))));
  c->set_pinned_bytes_per_step(static_cast<uint64_t>(std::llround(PerStep(pinned_bytes, n))));

  for (const auto& [detector, t] : findings) {
    v1::FindingProfile* f = p.add_findings();
    f->set_detector(detector);
    f->set_steps(static_cast<uint32_t>(t.lost_ns.size()));
    f->set_median_lost_ns(stats::Median(t.lost_ns));
    f->set_replayed_steps(t.replayed_steps);
  }
  std::stable_sort(p.mutable_findings()->begin(), p.mutable_findings()->end(),
                   [](const v1::FindingProfile& a, const v1::FindingProfile& b) {
                     return a.median_lost_ns() > b.median_lost_ns();
                   });
  p.set_replayed_steps(static_cast<uint32_t>(all_fixes_gain_ns.size()));
  if (!all_fixes_gain_ns.empty()) p.set_median_all_fixes_gain_ns(stats::Median(all_fixes_gain_ns));

  std::vector<std::pair<std::string, uint64_t>> ranked(verdicts.begin(), verdicts.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [detector, count] : ranked) {
    v1::BottleneckCount* v = p.add_verdicts();
    v->set_detector(ParseDetector(detector).value_or(v1::DETECTOR_UNSPECIFIED));
    v->set_steps(count);
  }
  return p;
}

v1::RunProfile ProfileSelection(const std::string& label, const std::vector<SelectedStep>& steps) {
  std::vector<const StepAnalysis*> analyses;
  std::set<int32_t> ranks;
  for (const SelectedStep& s : steps) {
    analyses.push_back(s.analysis);
    ranks.insert(s.rank);
  }
  const ComparedSelection selection = ComparedSteps(analyses);
  std::vector<ProfiledStep> profiled;
  // One classification per kernel name of each process's string table, for all its steps.
  std::map<const StringTable*, KernelClasses> classes;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!selection.compared[i]) continue;
    const v1::Step& st = steps[i].analysis->report.step();
    profiled.push_back({steps[i].analysis, MeasureStepFacts(*steps[i].events, *steps[i].strings,
                                                            {st.start_ns(), st.end_ns()},
                                                            &classes[steps[i].strings])});
  }
  return BuildRunProfile(label, profiled, static_cast<uint32_t>(steps.size()),
                         selection.warmup_included,
                         static_cast<uint32_t>(ranks.size()));
}

}  // namespace gpuspy::analysis
