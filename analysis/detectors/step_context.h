// What every per-step detector sees: the step's events (the process's events overlapping the
// window; detectors clip), names, the window, and the breakdown already computed for it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/evidence.h"
#include "analysis/host_activity.h"
#include "analysis/idle_attribution.h"
#include "analysis/intervals.h"
#include "analysis/kernel_classes.h"
#include "analysis/kernel_composition.h"
#include "analysis/step_segmenter.h"
#include "gpuspy/v1/report.pb.h"
#include "model/events.h"
#include "model/string_table.h"
#include "model/units.h"

namespace gpuspy::analysis {

struct StepContext {
  const EventColumns& events;
  const StringTable& strings;
  const StepWindow& step;
  const v1::StepBreakdown& breakdown;
  // The intervals behind breakdown.idle_* (which gap had which cause).
  const IdleAttribution& idle;
  // The process's kernel classes (one ClassifyKernel per name for all of its steps), and the
  // step's kernels classified once with them (ClassifiedKernels): what every detector and edit
  // that asks what a kernel is reads, instead of classifying the step again.
  KernelClasses& classes;
  const std::vector<ClassifiedKernel>& kernels;

  // What the host did in the step's gaps (host_activity.h), for every detector and fix that
  // asks, built when first asked for.
  mutable std::optional<HostActivityIndex> host_activity_index{};

  Interval window() const { return {step.start_ns, step.end_ns}; }
  HostActivityIndex& host_activity() const {
    if (!host_activity_index) host_activity_index.emplace(events, strings, window());
    return *host_activity_index;
  }
  // Spans must overlap the window; point events (start == end) must lie inside it. A span that
  // ends exactly where the step starts belongs to the previous step.
  bool InWindow(int64_t start, int64_t end) const {
    return analysis::InWindow(start, end, window());
  }
  double ShareOfWall(int64_t ns) const {
    return breakdown.wall_ns() > 0 ? static_cast<double>(ns) / breakdown.wall_ns() : 0.0;
  }
};

// A per-step detector: a pure function from a step to zero or one finding.
using StepDetector = std::optional<v1::Finding> (*)(const StepContext&);

// Every per-step detector, in a fixed order (ties in lost time resolve by this order).
const std::vector<StepDetector>& AllStepDetectors();

// Small helpers for building findings with uniform formatting.
std::string FormatPercent(double fraction);  // "37%"
// How much a finding costs its step (v1::Finding.severity), from the share of the step's wall
// time it costs (docs/detectors.md, "Severity").
inline constexpr double kWarningShareOfWall = 0.05;
inline constexpr double kCriticalShareOfWall = 0.25;
v1::Severity SeverityFor(double share_of_wall);

}  // namespace gpuspy::analysis
