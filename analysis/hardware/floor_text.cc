#include "analysis/hardware/floor_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/detectors/step_context.h"
#include "model/units.h"

namespace gpuspy::analysis {
namespace {

std::string FlopCount(uint64_t flops) {
  std::string rate = FormatFlopRate(static_cast<double>(flops));  // "2.10 TFLOP/s" -> "2.10 TFLOP"
  return rate.substr(0, rate.size() - 2);
}

// The job's FLOPs part of JobFloorLine.
std::string JobWorkLine(const v1::JobFloor& floor) {
  if (floor.steps() == 0) return absl::StrJoin(floor.notes(), "; ");
  std::vector<std::string> parts;
  if (floor.device_known()) parts.push_back(absl::StrCat("median MFU ", FormatPercent(floor.median_mfu())));
  if (floor.median_floor_ns() > 0) {
    parts.push_back(absl::StrCat("floor ", FormatMs(floor.median_floor_ns()), " of a ",
                                 FormatMs(floor.median_wall_ns()), " step"));
  }
  parts.push_back(absl::StrCat(FormatFlopRate(floor.median_achieved_flops_per_s()), " over the step (",
                               floor.steps(), floor.steps() == 1 ? " step" : " steps", " with FLOPs",
                               floor.device().empty() ? "" : "; device " + floor.device(),
                               !floor.device().empty() && !floor.device_known() ? ", not in the peak table" : "",
                               ")"));
  for (const std::string& n : floor.notes()) parts.push_back(n);
  return absl::StrJoin(parts, "; ");
}

}  // namespace

std::string WorkKindName(v1::WorkKind kind) {
  switch (kind) {
    case v1::WORK_KIND_MATMUL_TENSOR: return "matmul on tensor cores";
    case v1::WORK_KIND_MATMUL_SIMT: return "matmul on CUDA cores";
    case v1::WORK_KIND_MEMORY: return "memory-bound";
    default: return "other";
  }
}

std::string FloorLine(const v1::StepFloor& floor, int64_t wall_ns) {
  std::vector<std::string> parts;
  if (floor.work_size() > 0) {
    if (floor.floor_ns() > 0) {
      parts.push_back(absl::StrCat("floor ", FormatMs(floor.floor_ns()), " of ", FormatMs(wall_ns),
                                   " (GPU busy ", FormatMs(floor.gpu_busy_ns()), ")"));
    }
    if (floor.mfu() > 0) parts.push_back(absl::StrCat("MFU ", FormatPercent(floor.mfu())));
    if (floor.flops() > 0) {
      parts.push_back(absl::StrCat(FlopCount(floor.flops()), " at ",
                                   FormatFlopRate(floor.achieved_flops_per_s()), " over the step (",
                                   floor.flops_source() == v1::WORK_SOURCE_PROFILER_FLOPS
                                       ? "profiler FLOPs"
                                       : "from input shapes",
                                   ")"));
    }
    if (!floor.device().empty()) {
      parts.push_back(absl::StrCat("device ", floor.device(), floor.device_known() ? "" : " (not in the peak table)"));
    }
  }
  for (const std::string& n : floor.notes()) parts.push_back(n);
  return absl::StrJoin(parts, "; ");
}

std::string CounterReadingsText(const v1::CounterReadings& r) {
  std::vector<std::string> parts;
  auto add = [&](double pct, const char* before, const char* after) {
    if (pct >= 0) parts.push_back(absl::StrCat(before, FormatPercent(pct / 100.0), after));
  };
  add(r.tensor_active_pct(), "tensor pipes ", " busy");
  add(r.dram_throughput_pct(), "DRAM ", " of peak bandwidth");
  add(r.sm_active_pct(), "SMs ", " active");
  add(r.gpu_active_pct(), "GPU ", " busy");
  return absl::StrJoin(parts, ", ");
}

std::vector<std::string> CounterLines(const v1::StepFloor& floor) {
  std::vector<std::string> lines;
  if (!floor.has_counters()) return lines;
  const v1::MeasuredCounters& c = floor.counters();
  lines.push_back(absl::StrCat("counters (device ", c.device_id(), ", ", FormatMs(c.sampled_ns()),
                               " sampled): ", CounterReadingsText(c.step())));
  for (const v1::ClassCounterReadings& k : c.classes()) {
    lines.push_back(absl::StrCat("  ", k.kernel_class(), " (", FormatMs(k.sampled_ns()),
                                 " sampled): ", CounterReadingsText(k.readings())));
  }
  return lines;
}

std::string JobFloorLine(const v1::JobFloor& floor) {
  std::string line = JobWorkLine(floor);
  if (floor.counter_steps() == 0) return line;
  return absl::StrCat(line, line.empty() ? "" : "; ", "counters: ",
                      CounterReadingsText(floor.median_counters()), " (median of ",
                      floor.counter_steps(), floor.counter_steps() == 1 ? " step" : " steps", ")");
}

std::vector<std::string> WorkLines(const v1::StepFloor& floor) {
  std::vector<std::string> lines;
  for (const v1::WorkBucket& b : floor.work()) {
    std::string line = absl::StrCat(WorkKindName(b.kind()), b.dtype().empty() ? "" : " ", b.dtype(), ": ");
    if (b.flops() > 0) {
      absl::StrAppend(&line, FormatFlopRate(b.achieved_flops_per_s()));
      if (b.peak_flops_per_s() > 0) absl::StrAppend(&line, " (", FormatPercent(b.flops_fraction()), " of peak)");
    } else {
      absl::StrAppend(&line, FormatByteRate(b.achieved_bytes_per_s()));
      if (b.peak_bytes_per_s() > 0) {
        absl::StrAppend(&line, " (", FormatPercent(b.bytes_fraction()), " of memory bandwidth)");
      }
    }
    absl::StrAppend(&line, ", ", FormatMs(b.kernel_ns()), " of kernels, ", b.ops(), " ops");
    if (b.roofline_ns() > 0) absl::StrAppend(&line, ", at the roofline ", FormatMs(b.roofline_ns()));
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace gpuspy::analysis
