// What a step's GPU time is made of: its kernels in start order with their classes
// (kernel_classifier.h), and the time per class. Shared by the step report and the detectors
// that reason about composition (gpu_bound, unfused_elementwise, unfused_attention).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "analysis/intervals.h"
#include "analysis/kernel_classes.h"
#include "analysis/kernel_classifier.h"
#include "gpuspy/v1/report.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

struct ClassifiedKernel {
  int64_t start_ns;  // clipped to the window
  int64_t end_ns;
  StringRef name;
  KernelClass cls;
  int64_t duration_ns() const { return end_ns - start_ns; }
};

// Kernels overlapping the window, clipped to it, sorted by start (launch order on one stream),
// classified by `classes` (the process's: each name once for all of its steps). The step report
// builds this list once per step and every detector reads it (StepContext.kernels).
std::vector<ClassifiedKernel> ClassifiedKernels(const EventColumns& events,
                                                const StringTable& strings, const Interval& window,
                                                KernelClasses& classes);

// The same memory-bound kernel this many times in a row is one op over that many tensors (a
// per-parameter loop: a norm of each gradient), not a producer -> consumer chain that fusion
// turns into one memory pass: each pass reads other data, and fused into one multi-tensor launch
// it stays a pass (launch_storm's fix). Fewer in a row can be a chain (a + b + c: two adds).
inline constexpr size_t kMinLoopOverTensors = 4;
// For each kernel of a stream's sequence (names in launch order), whether it belongs to a run of
// at least kMinLoopOverTensors identical names.
std::vector<bool> LoopOverTensors(const std::vector<StringRef>& names);

// The GPU's busy time per class, and its kernel count, most time first; only classes that ran.
// Each instant some kernel runs goes to one class: to the compute classes running then (split
// evenly when streams overlap), and to communication only where no compute runs. A collective
// running beside compute (DeepEP's dispatch beside the experts' GEMMs, DDP's buckets beside
// backward) takes none of compute's time: summed durations had an MoE step's GEMMs at 31 % of
// "GPU time" for 55 % of the time the GPU was busy. Shares add up to 100 % of the busy time.
std::vector<v1::KernelClassTime> KernelComposition(absl::Span<const ClassifiedKernel> kernels);

// "gemm_tc 40% · elementwise 35% · other 25%": the first `max_classes` classes of a ranked list
// (a vector or a proto repeated field).
template <typename Classes>
std::string CompositionLine(const Classes& classes, size_t max_classes) {
  std::string line;
  size_t i = 0;
  for (const v1::KernelClassTime& c : classes) {
    if (i == max_classes) break;
    if (i++ > 0) line += " · ";
    line += c.kernel_class() + " " + std::to_string(static_cast<int>(c.share() * 100 + 0.5)) + "%";
  }
  return line;
}

}  // namespace gpuspy::analysis
