#include "analysis/hardware/job_floor.h"

#include "analysis/stats.h"

namespace gpuspy::analysis {

v1::JobFloor SummarizeFloor(const std::vector<const v1::StepReport*>& steps) {
  v1::JobFloor out;
  std::vector<double> mfu, achieved;
  std::vector<int64_t> floors, walls;
  for (const v1::StepReport* s : steps) {
    const v1::StepFloor& f = s->floor();
    if (out.device().empty() && !f.device().empty()) {
      out.set_device(f.device());
      out.set_device_known(f.device_known());
    }
    if (f.work_size() == 0) continue;
    mfu.push_back(f.mfu());
    achieved.push_back(f.achieved_flops_per_s());
    floors.push_back(f.floor_ns());
    walls.push_back(s->breakdown().wall_ns());
    if (out.notes().empty()) *out.mutable_notes() = f.notes();
  }
  out.set_steps(walls.size());
  if (walls.empty()) {
    if (!steps.empty()) *out.mutable_notes() = steps.front()->floor().notes();
    return out;
  }
  out.set_median_mfu(stats::Median(std::move(mfu)));
  out.set_median_floor_ns(stats::Median(std::move(floors)));
  out.set_median_wall_ns(stats::Median(std::move(walls)));
  out.set_median_achieved_flops_per_s(stats::Median(std::move(achieved)));
  return out;
}

}  // namespace gpuspy::analysis
