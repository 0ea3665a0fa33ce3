// A step's collectives on one rank: every communication kernel that starts in the step window,
// in start order, with what the producer knows of it (op, group, bytes) and its index among the
// step's collectives of the same (group, op): the key that matches it with the other ranks'.
//
// Strings are copied out of the process dictionary: the cross-rank analysis compares them across
// processes, each with its own dictionary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/comm/collective_op.h"
#include "analysis/intervals.h"
#include "analysis/kernel_classes.h"
#include "analysis/step_segmenter.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

struct StepCollective {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  CollectiveOp op = CollectiveOp::kUnknown;
  uint32_t kernel = 0;      // index into StepCollectives::kernels
  uint32_t group = 0;       // index into StepCollectives::groups; 0 is the unnamed group
  uint32_t index = 0;       // k-th collective of (group, op) in this step on this rank
  uint64_t bytes = 0;       // nccl-tests' message size (the larger of in/out); 0 = unknown
  uint32_t group_size = 0;  // 0 = unknown
  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct StepCollectives {
  std::vector<StepCollective> ops;
  // Compute (non-communication kernels, copies, memsets) running while any collective runs,
  // sorted and disjoint: a wait overlapped by compute costs nothing, one that is not is lost.
  std::vector<Interval> compute_in_comm;
  std::vector<std::string> kernels;
  std::vector<std::string> groups{""};

  const std::string& kernel_of(const StepCollective& c) const { return kernels[c.kernel]; }
  const std::string& group_of(const StepCollective& c) const { return groups[c.group]; }
  size_t ApproxBytes() const;
  // How much of [start, end) no compute overlaps.
  int64_t ExposedNs(int64_t start_ns, int64_t end_ns) const;
};

// Communication kernels starting in [step.start_ns, step.end_ns) (each belongs to one step).
// `classes` (optional): the process's kernel classes, shared with its other steps.
StepCollectives ExtractStepCollectives(const EventColumns& events, const StringTable& strings,
                                       const StepWindow& step, KernelClasses* classes = nullptr);

}  // namespace gpuspy::analysis
