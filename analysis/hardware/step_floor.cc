#include "analysis/hardware/step_floor.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuspy::analysis {
namespace {

int64_t SecondsToNs(double s) { return static_cast<int64_t>(std::llround(s * 1e9)); }

// Once: a cached analysis may be set against its device again.
void AddNoteOnce(v1::StepFloor* floor, const std::string& note) {
  for (const std::string& n : floor->notes()) {
    if (n == note) return;
  }
  floor->add_notes(note);
}

}  // namespace

void ApplyDevicePeaks(std::string_view device, const DevicePeaks* peaks, int64_t wall_ns,
                      v1::StepFloor* floor) {
  floor->set_device(std::string(device));
  floor->set_device_known(peaks != nullptr);
  if (floor->work_size() == 0) return;
  if (peaks == nullptr) {
    AddNoteOnce(floor, device.empty()
                         ? "the device is not named in the trace: achieved rates only, no share of peak"
                         : "device '" + std::string(device) +
                               "' is not in the peak table: achieved rates only, no share of peak");
    return;
  }
  const double bandwidth = PeakBytesPerSecond(*peaks);
  int64_t roofline_total = 0;
  uint64_t main_flops = 0;
  double main_peak = 0;  // the peak of the math with the most FLOPs: what MFU is a share of
  for (v1::WorkBucket& b : *floor->mutable_work()) {
    const double peak = PeakFlopsPerSecond(*peaks, b.kind(), b.dtype());
    b.set_peak_flops_per_s(peak);
    b.set_peak_bytes_per_s(bandwidth);
    if (peak > 0) b.set_flops_fraction(b.achieved_flops_per_s() / peak);
    if (bandwidth > 0) b.set_bytes_fraction(b.achieved_bytes_per_s() / bandwidth);
    const double compute_s = peak > 0 ? static_cast<double>(b.flops()) / peak : 0;
    const double memory_s = bandwidth > 0 ? static_cast<double>(b.bytes()) / bandwidth : 0;
    // A bucket with FLOPs but no unit for its type keeps its measured time: no floor below it.
    const bool unbounded = b.flops() > 0 && peak == 0;
    const int64_t roofline = unbounded ? b.kernel_ns() : SecondsToNs(std::max(compute_s, memory_s));
    b.set_roofline_ns(std::min(roofline, b.kernel_ns()));
    roofline_total += b.roofline_ns();
    if (b.flops() > main_flops && peak > 0) {
      main_flops = b.flops();
      main_peak = peak;
    }
  }
  // The GPU time of the step's other work (kernels of ops without figures, copies, communication)
  // stays as measured. Kernels of covered ops overlapping others (streams) can make the covered
  // time exceed the busy union: the rest is then 0.
  const int64_t rest = std::max<int64_t>(0, floor->gpu_busy_ns() - floor->covered_kernel_ns());
  floor->set_floor_ns(rest + roofline_total);
  if (main_peak > 0 && wall_ns > 0) {
    floor->set_mfu(static_cast<double>(floor->flops()) / (static_cast<double>(wall_ns) * 1e-9 * main_peak));
  }
}

}  // namespace gpuspy::analysis
