// The detectors that judge a step against the process's other steps (step_series.cc runs them
// in step order): warm-up, outlier steps, new kernels. Pure functions, one file each, thresholds
// named there and in docs/detectors.md ("Series detectors").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/evidence.h"
#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// One step as the series detectors see it.
struct SeriesStep {
  int64_t wall_ns = 0;
  int64_t median_wall_ns = 0;              // of the process's steps
  std::vector<std::string> fresh_kernels;  // kernel names no earlier step ran
  // The step's cuda_api_bound finding (context creation, module loading), if any: why a slow
  // step is slow, said on its warm-up or outlier finding.
  const v1::Finding* in_driver = nullptr;
};

// Leading steps are warm-up until the first one within this factor of the median.
inline constexpr double kWarmupFactor = 1.25;
// A step after warm-up is an outlier beyond this factor of the median.
inline constexpr double kOutlierFactor = 1.5;

// The driver's share of a slow step, as evidence on its warm-up or outlier finding.
inline void AddDriverEvidence(const SeriesStep& s, v1::Finding* f) {
  if (s.in_driver != nullptr && s.in_driver->lost_ns() > 0) {
    AddEvidence(f, "in_cuda_calls", Ns(s.in_driver->lost_ns()), " of it: " + s.in_driver->title());
  }
}

// Whether a leading step is still warm-up (it and every step before it above kWarmupFactor).
bool IsWarmupWall(int64_t wall_ns, int64_t median_wall_ns);

// A warm-up step's finding (the caller has decided it is one: IsWarmupWall on every step so far).
v1::Finding WarmupFinding(const SeriesStep& s);

// An outlier step after warm-up; nullopt within kOutlierFactor of the median.
std::optional<v1::Finding> DetectOutlierStep(const SeriesStep& s);

// A steady step that runs kernels never seen before (info: a recompile or a new code path);
// nullopt when every kernel was seen.
std::optional<v1::Finding> DetectNewKernels(const SeriesStep& s);

}  // namespace gpuspy::analysis
