// The peak rates of the GPUs users train on, from their vendors' datasheets (dense, no
// sparsity, boost clocks): what a step's achieved FLOP/s and bandwidth are measured against.
// docs/hardware-floor.md lists the sources and says how far a real kernel can get.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

struct DevicePeaks {
  std::string_view name;       // the table's name for it ("H100 SXM")
  // TFLOP/s (TOPS for int8) by math: FP32 on CUDA cores / vector units, and on tensor cores /
  // matrix units per input type; 0 where the device has no such unit (V100: no TF32, no BF16).
  double fp32_tflops = 0;
  double tf32_tflops = 0;      // FP32 inputs on tensor cores (MI250X: FP32 matrix)
  double fp16_tflops = 0;      // FP16 and BF16
  double fp8_tflops = 0;
  double int8_tops = 0;
  double memory_gbps = 0;      // HBM / GDDR bandwidth, GB/s (10^9 bytes)
};

// The entry whose model the device name (CUDA's or ROCm's, as the trace or CUDA reports it:
// "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "AMD Instinct MI300X") names; `memory_bytes`
// (0 unknown) tells an A100's 40 GB and 80 GB parts apart. Null for a device not in the table.
const DevicePeaks* FindDevicePeaks(std::string_view device_name, uint64_t memory_bytes);

// Peak FLOP/s of `kind` math in `dtype` (a DtypeShortName: "fp32", "bf16", "fp8", ...) on the
// device: tensor-core math at its type's rate (FP32 inputs at TF32's), CUDA-core math at FP32's.
// 0 when the device has no unit for it.
double PeakFlopsPerSecond(const DevicePeaks& d, v1::WorkKind kind, std::string_view dtype);

// Peak memory bandwidth, bytes/s.
double PeakBytesPerSecond(const DevicePeaks& d);

}  // namespace gpuspy::analysis
