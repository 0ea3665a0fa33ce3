// What every communication detector sees: one rank's step after the cross-rank analysis (its
// breakdown's comm split and its CommSummary are filled), and the same step on the other ranks.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/detectors/step_context.h"
#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

struct PeerStep {
  int32_t rank = -1;
  const v1::StepReport* report = nullptr;
  int64_t waited_for_me_ns = 0;  // how long this peer waited in collectives for the rank at hand
};

struct CommStepContext {
  const v1::StepReport& report;
  const std::vector<PeerStep>& peers;
  // What the rank this one waited for (comm.waited_for_rank) keeping pace would save the job's
  // step: the least any rank waited for it (straggler.cc's prediction, the same figure on every
  // rank); unset when that rank was not captured.
  std::optional<int64_t> late_rank_fix_gain_ns = std::nullopt;

  const v1::StepBreakdown& breakdown() const { return report.breakdown(); }
  const v1::CommSummary& comm() const { return report.comm(); }
  double ShareOfWall(int64_t ns) const {
    const int64_t wall = report.breakdown().wall_ns();
    return wall > 0 ? static_cast<double>(ns) / wall : 0.0;
  }
};

// A communication detector: a pure function from a rank's step (and its peers') to a finding.
using CommDetector = std::optional<v1::Finding> (*)(const CommStepContext&);

std::optional<v1::Finding> DetectStragglerWait(const CommStepContext& ctx);
std::optional<v1::Finding> DetectStraggler(const CommStepContext& ctx);
std::optional<v1::Finding> DetectExposedComm(const CommStepContext& ctx);
std::optional<v1::Finding> DetectCommStorm(const CommStepContext& ctx);

// Every communication detector, in a fixed order (ties in lost time resolve by this order).
const std::vector<CommDetector>& AllCommDetectors();

// comm_storm's condition, shared with exposed_comm: a storm's exposed time is the storm's.
bool IsCommStorm(const v1::StepReport& report);

}  // namespace gpuspy::analysis
