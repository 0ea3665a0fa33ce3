// A step's work set against its device's peaks: each bucket's share of peak and its time at the
// roofline, the step's floor and its model FLOPs utilisation (docs/hardware-floor.md).
#pragma once

#include <cstdint>
#include <string_view>

#include "analysis/hardware/device_peaks.h"
#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// Fills the device-dependent fields of `floor` (MeasureStepWork's) for a step of `wall_ns` on
// `device` (the name as reported; "" unknown), whose peaks are `peaks` (null: not in the table,
// so only achieved figures are shown and a note says why).
void ApplyDevicePeaks(std::string_view device, const DevicePeaks* peaks, int64_t wall_ns,
                      v1::StepFloor* floor);

}  // namespace gpuspy::analysis
