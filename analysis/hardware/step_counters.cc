#include "analysis/hardware/step_counters.h"

#include <algorithm>
#include <array>
#include <map>
#include <vector>

namespace gpuspy::analysis {
namespace {

constexpr size_t kReadings = 4;

std::array<float, kReadings> Values(const CounterSampleEvent& s) {
  return {s.tensor_active_pct, s.dram_throughput_pct, s.sm_active_pct, s.gpu_active_pct};
}

// Time-weighted means of each reading, over the samples that measured it.
struct Mean {
  std::array<double, kReadings> weighted{}, weight{};
  void Add(const CounterSampleEvent& s, double ns) {
    const auto v = Values(s);
    for (size_t k = 0; k < kReadings; ++k) {
      if (v[k] < 0) continue;
      weighted[k] += ns * v[k];
      weight[k] += ns;
    }
  }
  v1::CounterReadings Readings() const {
    v1::CounterReadings r;
    double out[kReadings];
    for (size_t k = 0; k < kReadings; ++k) out[k] = weight[k] > 0 ? weighted[k] / weight[k] : -1.0;
    r.set_tensor_active_pct(out[0]);
    r.set_dram_throughput_pct(out[1]);
    r.set_sm_active_pct(out[2]);
    r.set_gpu_active_pct(out[3]);
    return r;
  }
};

// Sorted, disjoint intervals.
using Union = std::vector<std::pair<int64_t, int64_t>>;

void Merge(Union* u) {
  std::sort(u->begin(), u->end());
  Union out;
  for (const auto& [a, b] : *u) {
    if (!out.empty() && a <= out.back().second) {
      out.back().second = std::max(out.back().second, b);
    } else {
      out.emplace_back(a, b);
    }
  }
  *u = std::move(out);
}

int64_t Covered(const Union& u, int64_t a, int64_t b) {
  int64_t covered = 0;
  // The first interval that may reach past `a`: intervals are disjoint and sorted by both ends.
  auto it = std::lower_bound(u.begin(), u.end(), a,
                             [](const std::pair<int64_t, int64_t>& iv, int64_t t) { return iv.second <= t; });
  for (; it != u.end() && it->first < b; ++it) covered += std::min(b, it->second) - std::max(a, it->first);
  return covered;
}

}  // namespace

std::optional<v1::MeasuredCounters> MeasureStepCounters(const EventColumns& events,
                                                         const StringTable& strings,
                                                         const StepWindow& step,
                                                         KernelClasses& classes) {
  if (events.counter_samples.empty() || step.end_ns <= step.start_ns) return std::nullopt;
  // The step's kernels, clipped to it, by device and class.
  std::map<uint32_t, int64_t> device_ns;
  std::map<std::pair<uint32_t, KernelClass>, Union> spans;
  for (const KernelEvent& k : events.kernels) {
    if (k.start_ns < step.start_ns || k.start_ns >= step.end_ns || k.end_ns <= k.start_ns) continue;
    const int64_t end = std::min(k.end_ns, step.end_ns);
    device_ns[k.stream.device_id] += end - k.start_ns;
    spans[{k.stream.device_id, classes.Of(strings, k.name)}].emplace_back(k.start_ns, end);
  }
  uint32_t device = events.counter_samples.front().device_id;
  int64_t most = -1;
  for (const auto& [d, ns] : device_ns) {
    if (ns > most) most = ns, device = d;
  }
  for (auto& [key, u] : spans) Merge(&u);

  Mean step_mean;
  int64_t sampled = 0;
  std::map<KernelClass, std::pair<Mean, int64_t>> by_class;  // mean, sampled ns
  for (const CounterSampleEvent& s : events.counter_samples) {
    if (s.device_id != device || s.end_ns <= s.start_ns) continue;
    const int64_t a = std::max(s.start_ns, step.start_ns), b = std::min(s.end_ns, step.end_ns);
    if (b <= a) continue;
    const int64_t in_step = b - a;
    sampled += in_step;
    step_mean.Add(s, static_cast<double>(in_step));
    const double length = static_cast<double>(s.end_ns - s.start_ns);
    for (const auto& [key, u] : spans) {
      if (key.first != device) continue;
      // Of the whole sample: the kernels after the step's end are not in `spans`, so a sample
      // straddling the end counts only if the step's own kernels fill it.
      if (static_cast<double>(Covered(u, s.start_ns, s.end_ns)) < kMinClassFill * length) continue;
      auto& [mean, ns] = by_class[key.second];
      mean.Add(s, static_cast<double>(in_step));
      ns += in_step;
    }
  }
  if (sampled == 0) return std::nullopt;
  v1::MeasuredCounters out;
  out.set_device_id(device);
  out.set_sampled_ns(std::min(sampled, step.end_ns - step.start_ns));
  *out.mutable_step() = step_mean.Readings();
  std::vector<v1::ClassCounterReadings> classes_out;
  for (const auto& [c, mean_ns] : by_class) {
    v1::ClassCounterReadings r;
    r.set_kernel_class(std::string(KernelClassName(c)));
    r.set_sampled_ns(mean_ns.second);
    *r.mutable_readings() = mean_ns.first.Readings();
    classes_out.push_back(std::move(r));
  }
  std::stable_sort(classes_out.begin(), classes_out.end(),
                   [](const v1::ClassCounterReadings& a, const v1::ClassCounterReadings& b) {
                     return a.sampled_ns() > b.sampled_ns();
                   });
  for (auto& r : classes_out) *out.add_classes() = std::move(r);
  return out;
}

}  // namespace gpuspy::analysis
