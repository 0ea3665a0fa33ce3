#include "analysis/kernel_composition.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>

namespace gpuspy::analysis {

std::vector<ClassifiedKernel> ClassifiedKernels(const EventColumns& events,
                                                const StringTable& strings, const Interval& w,
                                                KernelClasses& classes) {
  std::vector<ClassifiedKernel> out;
  for (const KernelEvent& k : events.kernels) {
    if (k.start_ns >= w.end_ns || k.end_ns <= w.start_ns) continue;
    out.push_back({std::max(k.start_ns, w.start_ns), std::min(k.end_ns, w.end_ns), k.name,
                   classes.Of(strings, k.name)});
  }
  std::stable_sort(out.begin(), out.end(), [](const ClassifiedKernel& a, const ClassifiedKernel& b) {
    return a.start_ns < b.start_ns;
  });
  return out;
}

std::vector<v1::KernelClassTime> KernelComposition(absl::Span<const ClassifiedKernel> kernels) {
  // Sweep the kernels' starts and ends; each stretch between two of them goes to the classes
  // running then: the compute classes, split evenly, else communication.
  constexpr size_t kClasses = static_cast<size_t>(KernelClass::kTriton) + 1;
  struct Edge {
    int64_t t;
    int delta;
    KernelClass cls;
  };
  std::vector<Edge> edges;
  edges.reserve(2 * kernels.size());
  std::array<uint64_t, kClasses> count{};
  for (const ClassifiedKernel& k : kernels) {
    ++count[static_cast<size_t>(k.cls)];
    if (k.end_ns <= k.start_ns) continue;
    edges.push_back({k.start_ns, +1, k.cls});
    edges.push_back({k.end_ns, -1, k.cls});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  std::array<int, kClasses> running{};
  std::array<int64_t, kClasses> ns{};
  int64_t busy = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    running[static_cast<size_t>(edges[i].cls)] += edges[i].delta;
    if (i + 1 == edges.size() || edges[i + 1].t == edges[i].t) continue;
    const int64_t length = edges[i + 1].t - edges[i].t;
    constexpr auto kComm = static_cast<size_t>(KernelClass::kCommunication);
    std::array<size_t, kClasses> holders;
    size_t n = 0;
    for (size_t c = 0; c < kClasses; ++c) {
      if (running[c] > 0 && c != kComm) holders[n++] = c;
    }
    if (n == 0 && running[kComm] > 0) holders[n++] = kComm;
    if (n == 0) continue;
    busy += length;
    const auto share = length / static_cast<int64_t>(n);
    for (size_t j = 0; j < n; ++j) ns[holders[j]] += share + (j == 0 ? length % static_cast<int64_t>(n) : 0);
  }
  std::vector<v1::KernelClassTime> out;
  for (size_t c = 0; c < kClasses; ++c) {
    if (count[c] == 0) continue;
    v1::KernelClassTime& t = out.emplace_back();
    t.set_kernel_class(std::string(KernelClassName(static_cast<KernelClass>(c))));
    t.set_ns(ns[c]);
    t.set_count(count[c]);
    t.set_share(busy > 0 ? static_cast<double>(ns[c]) / static_cast<double>(busy) : 0.0);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.ns() > b.ns(); });
  return out;
}

std::vector<bool> LoopOverTensors(const std::vector<StringRef>& names) {
  std::vector<bool> out(names.size(), false);
  for (size_t i = 0; i < names.size();) {
    size_t j = i + 1;
    while (j < names.size() && names[j] == names[i]) ++j;
    if (j - i >= kMinLoopOverTensors) std::fill(out.begin() + static_cast<std::ptrdiff_t>(i), out.begin() + static_cast<std::ptrdiff_t>(j), true);
    i = j;
  }
  return out;
}

}  // namespace gpuspy::analysis
