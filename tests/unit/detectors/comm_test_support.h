// What the communication detectors' tests share: a hand-built step report of one rank, a
// finding's evidence by key, and running a detector on a step with its peers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/detectors/comm_context.h"

namespace gpuspy::analysis::comm_test {

inline constexpr int64_t ms = 1'000'000;

inline v1::StepReport Step(int32_t rank, int64_t wall_ns) {
  v1::StepReport r;
  r.mutable_step()->set_start_ns(0);
  r.mutable_step()->set_end_ns(wall_ns);
  r.mutable_breakdown()->set_wall_ns(wall_ns);
  r.mutable_comm()->set_rank(rank);
  r.mutable_comm()->set_waited_for_rank(-1);
  return r;
}

inline std::string Evidence(const v1::Finding& f, const std::string& key) {
  for (const auto& e : f.evidence()) {
    if (e.key() == key) return e.value();
  }
  return "";
}

inline std::optional<v1::Finding> Check(CommDetector detect, const v1::StepReport& r,
                               const std::vector<PeerStep>& peers = {}) {
  return detect(CommStepContext{r, peers});
}

}  // namespace gpuspy::analysis::comm_test
