#include "analysis/hardware/step_work.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/dtypes.h"

namespace gpuspy::analysis {
namespace {

struct KernelTime {
  int64_t ns = 0;
  bool simt_gemm = false;
  bool tensor_math = false;
};

// The kind of math an op with these kernels ran: FLOPs on a SIMT GEMM kernel, or FP32 FLOPs on
// kernels that are not tensor-core math, are CUDA-core math; other FLOPs tensor-core math; an
// op without FLOPs (elementwise, norms, copies) is memory-bound work.
v1::WorkKind KindOf(const OpWorkEvent& w, std::string_view dtype, const KernelTime& k) {
  if (w.flops == 0) return v1::WORK_KIND_MEMORY;
  if (k.simt_gemm) return v1::WORK_KIND_MATMUL_SIMT;
  if (dtype == "fp32" && !k.tensor_math) return v1::WORK_KIND_MATMUL_SIMT;
  return v1::WORK_KIND_MATMUL_TENSOR;
}

// The op works whose range starts in the step, outermost of nested ones on a thread.
std::vector<const OpWorkEvent*> OutermostWorks(const EventColumns& events, const StepWindow& step) {
  std::vector<const OpWorkEvent*> works;
  for (const OpWorkEvent& w : events.op_works) {
    if (w.start_ns >= step.start_ns && w.start_ns < step.end_ns) works.push_back(&w);
  }
  std::sort(works.begin(), works.end(), [](const OpWorkEvent* a, const OpWorkEvent* b) {
    return std::tuple(a->thread_id, a->start_ns, -a->end_ns) <
           std::tuple(b->thread_id, b->start_ns, -b->end_ns);
  });
  std::vector<const OpWorkEvent*> kept;
  for (const OpWorkEvent* w : works) {
    if (!kept.empty() && kept.back()->thread_id == w->thread_id && w->end_ns <= kept.back()->end_ns) {
      continue;  // inside the op before it
    }
    kept.push_back(w);
  }
  return kept;
}

}  // namespace

v1::StepFloor MeasureStepWork(const EventColumns& events, const StringTable& strings,
                              const StepWindow& step, int64_t gpu_busy_ns, KernelClasses& classes) {
  v1::StepFloor floor;
  floor.set_gpu_busy_ns(gpu_busy_ns);
  const std::vector<const OpWorkEvent*> works = OutermostWorks(events, step);
  if (works.empty()) {
    const bool has_ops = std::any_of(events.nvtx_ranges.begin(), events.nvtx_ranges.end(),
                                     [&](const NvtxRangeEvent& r) {
                                       return r.start_ns >= step.start_ns && r.start_ns < step.end_ns &&
                                              strings.Get(r.domain) == kCpuOpDomain;
                                     });
    floor.add_notes(has_ops ? "no op of the step carries FLOPs or shapes: record with "
                              "torch.profiler.profile(record_shapes=True, with_flops=True)"
                            : "the capture has no framework ops to count FLOPs from: a PyTorch "
                              "profiler trace recorded with record_shapes=True, with_flops=True has; "
                              "a live capture reads the tensor pipes and DRAM with GPUSPY_COUNTERS=1");
    return floor;
  }
  // Each launch's kernels, by correlation id; each thread's calls in time order.
  absl::flat_hash_map<uint64_t, KernelTime> kernels;
  for (const KernelEvent& k : events.kernels) {
    KernelTime& t = kernels[k.correlation_id];
    t.ns += k.end_ns - k.start_ns;
    const KernelClass c = classes.Of(strings, k.name);
    t.simt_gemm |= c == KernelClass::kSimtFp32Gemm;
    t.tensor_math |= c == KernelClass::kTensorCoreMath;
  }
  std::map<uint32_t, std::vector<std::pair<int64_t, uint64_t>>> calls;  // thread -> (start, corr)
  for (const ApiEvent& a : events.apis) {
    if (kernels.contains(a.correlation_id)) calls[a.thread_id].emplace_back(a.start_ns, a.correlation_id);
  }
  for (auto& [thread, list] : calls) std::sort(list.begin(), list.end());

  struct Sum {
    uint64_t ops = 0, flops = 0, bytes = 0;
    int64_t kernel_ns = 0;
  };
  std::map<std::pair<v1::WorkKind, std::string>, Sum> buckets;
  uint64_t flops_by_source[3] = {0, 0, 0};
  for (const OpWorkEvent* w : works) {
    auto thread = calls.find(w->thread_id);
    if (thread == calls.end()) continue;
    const auto& list = thread->second;
    KernelTime k;
    for (auto it = std::lower_bound(list.begin(), list.end(), std::pair(w->start_ns, uint64_t{0}));
         it != list.end() && it->first <= w->end_ns; ++it) {
      const KernelTime& t = kernels.at(it->second);
      k.ns += t.ns;
      k.simt_gemm |= t.simt_gemm;
      k.tensor_math |= t.tensor_math;
    }
    if (k.ns <= 0) continue;  // no GPU work: a CPU tensor's op
    const std::string dtype(DtypeShortName(strings.Get(w->dtype)));
    const v1::WorkKind kind = KindOf(*w, dtype, k);
    // Memory-bound work is bound by bandwidth whatever its type: one bucket for all of it.
    Sum& s = buckets[{kind, kind == v1::WORK_KIND_MEMORY ? std::string() : dtype}];
    ++s.ops;
    s.flops += w->flops;
    s.bytes += w->bytes;
    s.kernel_ns += k.ns;
    flops_by_source[static_cast<size_t>(w->source) % 3] += w->flops;
  }
  uint64_t flops = 0;
  int64_t covered = 0;
  std::vector<v1::WorkBucket> out;
  for (const auto& [key, s] : buckets) {
    v1::WorkBucket b;
    b.set_kind(key.first);
    b.set_dtype(key.second);
    b.set_ops(s.ops);
    b.set_flops(s.flops);
    b.set_bytes(s.bytes);
    b.set_kernel_ns(s.kernel_ns);
    const double seconds = static_cast<double>(s.kernel_ns) * 1e-9;
    b.set_achieved_flops_per_s(static_cast<double>(s.flops) / seconds);
    b.set_achieved_bytes_per_s(static_cast<double>(s.bytes) / seconds);
    flops += s.flops;
    covered += s.kernel_ns;
    out.push_back(std::move(b));
  }
  std::stable_sort(out.begin(), out.end(), [](const v1::WorkBucket& a, const v1::WorkBucket& b) {
    return a.kernel_ns() > b.kernel_ns();
  });
  for (v1::WorkBucket& b : out) *floor.add_work() = std::move(b);
  floor.set_flops(flops);
  floor.set_covered_kernel_ns(covered);
  floor.set_flops_source(flops == 0 ? v1::WORK_SOURCE_UNKNOWN
                         : flops_by_source[1] >= flops_by_source[2] ? v1::WORK_SOURCE_PROFILER_FLOPS
                                                                    : v1::WORK_SOURCE_INPUT_SHAPES);
  const int64_t wall = step.end_ns - step.start_ns;
  if (wall > 0) floor.set_achieved_flops_per_s(static_cast<double>(flops) / (static_cast<double>(wall) * 1e-9));
  if (flops == 0 && covered > 0) {
    floor.add_notes("the step's ops carry bytes but no FLOPs: record with with_flops=True, or "
                    "record_shapes=True for matmuls");
  }
  return floor;
}

}  // namespace gpuspy::analysis
