#include "analysis/time_parts.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpuspy::analysis {

void SetTimeParts(v1::StepBreakdown* b) {
  // Exposed communication is kernel time; it cannot exceed the kernels' union.
  const int64_t exposed = std::clamp<int64_t>(b->exposed_comm_ns(), 0, std::max<int64_t>(0, b->kernel_ns()));
  const int64_t wait = std::max<int64_t>(0, b->comm_wait_ns());
  const int64_t transfer = std::max<int64_t>(0, b->comm_transfer_ns());
  int64_t exposed_wait = 0, exposed_transfer = 0;
  if (exposed > 0 && wait + transfer > 0) {
    exposed_wait = std::llround(static_cast<double>(exposed) * static_cast<double>(wait) /
                                static_cast<double>(wait + transfer));
    exposed_transfer = exposed - exposed_wait;
  }
  const int64_t idle_attributed = b->idle_sync_blocked_ns() + b->idle_launch_bound_ns() +
                                  b->idle_input_ns() + b->idle_host_other_ns() +
                                  b->idle_cuda_call_ns();
  const int64_t copy = std::max<int64_t>(0, b->gpu_busy_ns() - b->kernel_ns());
  const int64_t compute = std::max<int64_t>(0, b->kernel_ns() - exposed_wait - exposed_transfer);
  const int64_t accounted = compute + exposed_wait + exposed_transfer + copy + idle_attributed;
  const std::pair<v1::TimeCause, int64_t> parts[] = {
      {v1::TIME_CAUSE_COMPUTE, compute},
      {v1::TIME_CAUSE_COMM_WAIT, exposed_wait},
      {v1::TIME_CAUSE_COMM_TRANSFER, exposed_transfer},
      {v1::TIME_CAUSE_COPY, copy},
      {v1::TIME_CAUSE_SYNC, b->idle_sync_blocked_ns()},
      {v1::TIME_CAUSE_LAUNCH, b->idle_launch_bound_ns()},
      {v1::TIME_CAUSE_INPUT, b->idle_input_ns()},
      {v1::TIME_CAUSE_HOST, b->idle_host_other_ns()},
      {v1::TIME_CAUSE_CUDA_CALL, b->idle_cuda_call_ns()},
      {v1::TIME_CAUSE_UNEXPLAINED, std::max<int64_t>(0, b->wall_ns() - accounted)},
  };
  b->clear_parts();
  for (const auto& [cause, ns] : parts) {
    if (ns <= 0) continue;
    v1::TimePart* p = b->add_parts();
    p->set_cause(cause);
    p->set_ns(ns);
  }
}

int64_t PartNs(const google::protobuf::RepeatedPtrField<v1::TimePart>& parts, v1::TimeCause cause) {
  for (const v1::TimePart& p : parts) {
    if (p.cause() == cause) return p.ns();
  }
  return 0;
}

}  // namespace gpuspy::analysis
