#include "analysis/kernel_composition.h"

#include <algorithm>
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
  std::map<KernelClass, std::pair<int64_t, uint64_t>> acc;
  int64_t total = 0;
  for (const ClassifiedKernel& k : kernels) {
    auto& [ns, count] = acc[k.cls];
    ns += k.duration_ns();
    ++count;
    total += k.duration_ns();
  }
  std::vector<v1::KernelClassTime> out;
  for (const auto& [cls, v] : acc) {
    v1::KernelClassTime& c = out.emplace_back();
    c.set_kernel_class(std::string(KernelClassName(cls)));
    c.set_ns(v.first);
    c.set_count(v.second);
    c.set_share(total > 0 ? static_cast<double>(v.first) / total : 0.0);
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
