#include "analysis/hardware/job_floor.h"

#include "analysis/stats.h"

namespace gpuspy::analysis {

namespace {

// Each reading's median over the steps that measured it; -1 when none did.
void SummarizeCounters(const std::vector<const v1::StepReport*>& steps, v1::JobFloor* out) {
  std::vector<double> readings[4];
  uint64_t n = 0;
  for (const v1::StepReport* s : steps) {
    if (!s->floor().has_counters()) continue;
    ++n;
    const v1::CounterReadings& r = s->floor().counters().step();
    const double values[] = {r.tensor_active_pct(), r.dram_throughput_pct(), r.sm_active_pct(),
                             r.gpu_active_pct()};
    for (size_t k = 0; k < 4; ++k) {
      if (values[k] >= 0) readings[k].push_back(values[k]);
    }
  }
  if (n == 0) return;
  out->set_counter_steps(n);
  auto median = [&](size_t k) { return readings[k].empty() ? -1.0 : stats::Median(std::move(readings[k])); };
  v1::CounterReadings* m = out->mutable_median_counters();
  m->set_tensor_active_pct(median(0));
  m->set_dram_throughput_pct(median(1));
  m->set_sm_active_pct(median(2));
  m->set_gpu_active_pct(median(3));
}

}  // namespace

v1::JobFloor SummarizeFloor(const std::vector<const v1::StepReport*>& steps) {
  v1::JobFloor out;
  SummarizeCounters(steps, &out);
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
