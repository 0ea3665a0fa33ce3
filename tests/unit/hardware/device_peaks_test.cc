// The device table: names as CUDA and ROCm report them, the A100's two memory sizes, and the
// peaks a kind of math is measured against.
#include "analysis/hardware/device_peaks.h"

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

std::string_view NameOf(std::string_view device, uint64_t memory = 0) {
  const DevicePeaks* p = FindDevicePeaks(device, memory);
  return p == nullptr ? "" : p->name;
}

TEST(DevicePeaks, NamesAsDriversReportThem) {
  EXPECT_EQ(NameOf("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(NameOf("NVIDIA H100 PCIe"), "H100 PCIe");
  EXPECT_EQ(NameOf("NVIDIA H100 NVL"), "H100 NVL");
  EXPECT_EQ(NameOf("NVIDIA H200"), "H200");
  EXPECT_EQ(NameOf("NVIDIA B200"), "B200");
  EXPECT_EQ(NameOf("Tesla V100-SXM2-32GB"), "V100");
  EXPECT_EQ(NameOf("NVIDIA L4"), "L4");
  EXPECT_EQ(NameOf("NVIDIA L40S"), "L40S");
  EXPECT_EQ(NameOf("AMD Instinct MI300X"), "MI300X");
  EXPECT_EQ(NameOf("AMD Instinct MI250X"), "MI250X");
  // The shared traces' device: an A100 board with 40 GB.
  EXPECT_EQ(NameOf("NVIDIA A100-PG509-200", 42297524224), "A100 40GB");
  EXPECT_EQ(NameOf("NVIDIA A100-SXM4-80GB", 80 * kGiB), "A100 80GB");
}

TEST(DevicePeaks, UnknownDevicesAreNotGuessed) {
  EXPECT_EQ(FindDevicePeaks("Tesla T4", 16 * kGiB), nullptr);
  EXPECT_EQ(FindDevicePeaks("NVIDIA L40", 48 * kGiB), nullptr) << "an L40 is no L4 and no L40S";
  EXPECT_EQ(FindDevicePeaks("", 0), nullptr);
}

TEST(DevicePeaks, EachKindOfMathHasItsPeak) {
  const DevicePeaks& h100 = *FindDevicePeaks("NVIDIA H100 80GB HBM3", 80 * kGiB);
  EXPECT_DOUBLE_EQ(PeakFlopsPerSecond(h100, v1::WORK_KIND_MATMUL_TENSOR, "bf16"), 989e12);
  EXPECT_DOUBLE_EQ(PeakFlopsPerSecond(h100, v1::WORK_KIND_MATMUL_TENSOR, "fp8"), 1979e12);
  EXPECT_DOUBLE_EQ(PeakFlopsPerSecond(h100, v1::WORK_KIND_MATMUL_TENSOR, "fp32"), 495e12) << "TF32";
  EXPECT_DOUBLE_EQ(PeakFlopsPerSecond(h100, v1::WORK_KIND_MATMUL_SIMT, "fp32"), 67e12);
  EXPECT_DOUBLE_EQ(PeakBytesPerSecond(h100), 3350e9);
  const DevicePeaks& v100 = *FindDevicePeaks("Tesla V100-SXM2-16GB", 16 * kGiB);
  EXPECT_DOUBLE_EQ(PeakFlopsPerSecond(v100, v1::WORK_KIND_MATMUL_TENSOR, "fp32"), 15.7e12)
      << "no TF32 on a V100: FP32 runs on CUDA cores";
  const DevicePeaks& a100 = *FindDevicePeaks("NVIDIA A100-SXM4-40GB", 40 * kGiB);
  EXPECT_DOUBLE_EQ(PeakFlopsPerSecond(a100, v1::WORK_KIND_MATMUL_TENSOR, "fp8"), 312e12)
      << "no FP8 units: 16-bit rate";
  EXPECT_DOUBLE_EQ(PeakFlopsPerSecond(a100, v1::WORK_KIND_MATMUL_TENSOR, "fp64"), 0);
}

}  // namespace
}  // namespace gpuspy::analysis
