// What one step did, by name, for comparing runs (run_profile.h): time per kernel name, blocked
// time per call site, launches, copies by host memory kind. The step report keeps only its top
// kernels and its findings' top sites; a comparison needs every name to pair A with B.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/intervals.h"
#include "analysis/kernel_classes.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

struct KernelFact {
  std::string name;
  uint64_t calls = 0;
  int64_t ns = 0;  // summed durations, clipped to the step
};

struct BlockingSiteFact {
  std::string site;  // the call site, or the API's name when none was recorded
  std::string api;
  uint64_t calls = 0;
  int64_t blocked_ns = 0;
};

struct StepFacts {
  std::vector<KernelFact> kernels;  // communication kernels excluded (collectives have their own)
  std::vector<BlockingSiteFact> blocking_sites;
  uint64_t launches = 0;
  uint64_t copies = 0;
  uint64_t pageable_copies = 0;
  uint64_t pageable_bytes = 0;
  uint64_t pinned_bytes = 0;
};

// Facts of the events in `window` (point events inside it, spans overlapping it). `classes`
// (optional): kernel classes shared with the process's other steps.
StepFacts MeasureStepFacts(const EventColumns& events, const StringTable& strings, Interval window,
                           KernelClasses* classes = nullptr);

}  // namespace gpuspy::analysis
