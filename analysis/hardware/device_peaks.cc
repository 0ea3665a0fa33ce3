#include "analysis/hardware/device_peaks.h"

#include <array>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace gpuspy::analysis {
namespace {

// Most specific first: "H100 PCIe" before "H100", "A100 80GB" before "A100".
struct Entry {
  std::string_view match;     // lower-case substring of the device name
  uint64_t min_memory_bytes;  // the entry applies from this much memory on (0: any)
  DevicePeaks peaks;
};

constexpr uint64_t kGiB = uint64_t{1} << 30;

// NVIDIA datasheets (V100, A100, H100, H200, B200, L4, L40S) and AMD's (MI250X, MI300X).
constexpr std::array<Entry, 12> kTable = {{
    {"h200", 0, {"H200", 67, 495, 989, 1979, 1979, 4800}},
    {"h100 pcie", 0, {"H100 PCIe", 51, 378, 756, 1513, 1513, 2000}},
    {"h100 nvl", 0, {"H100 NVL", 60, 418, 835, 1671, 1671, 3900}},
    {"h100", 0, {"H100 SXM", 67, 495, 989, 1979, 1979, 3350}},
    {"b200", 0, {"B200", 80, 1100, 2250, 4500, 4500, 8000}},
    {"a100", 60 * kGiB, {"A100 80GB", 19.5, 156, 312, 0, 624, 2039}},
    {"a100", 0, {"A100 40GB", 19.5, 156, 312, 0, 624, 1555}},
    {"l40s", 0, {"L40S", 91.6, 183, 362, 733, 733, 864}},
    {"l4", 0, {"L4", 30.3, 60, 121, 242, 242, 300}},
    {"v100", 0, {"V100", 15.7, 0, 125, 0, 62, 900}},
    {"mi300x", 0, {"MI300X", 163.4, 653.7, 1307.4, 2614.9, 2614.9, 5300}},
    {"mi250x", 0, {"MI250X", 47.9, 95.7, 383, 0, 383, 3277}},
}};

}  // namespace

const DevicePeaks* FindDevicePeaks(std::string_view device_name, uint64_t memory_bytes) {
  const std::string lower = absl::AsciiStrToLower(absl::string_view(device_name.data(), device_name.size()));
  for (const Entry& e : kTable) {
    if (!absl::StrContains(lower, absl::string_view(e.match.data(), e.match.size()))) continue;
    // The 40 GB part when the memory is unknown: the lower bandwidth, a floor not too low.
    if (e.min_memory_bytes > 0 && memory_bytes < e.min_memory_bytes) continue;
    // "l4" is inside "l40s": the L40S entry comes first, and an "l40" without "s" is no L4.
    if (e.match == "l4" && absl::StrContains(lower, "l40")) continue;
    return &e.peaks;
  }
  return nullptr;
}

double PeakFlopsPerSecond(const DevicePeaks& d, v1::WorkKind kind, std::string_view dtype) {
  double tflops = 0;
  if (kind == v1::WORK_KIND_MATMUL_SIMT) {
    tflops = d.fp32_tflops;
  } else if (dtype == "fp32") {
    tflops = d.tf32_tflops > 0 ? d.tf32_tflops : d.fp32_tflops;
  } else if (dtype == "fp16" || dtype == "bf16") {
    tflops = d.fp16_tflops;
  } else if (dtype == "fp8") {
    tflops = d.fp8_tflops > 0 ? d.fp8_tflops : d.fp16_tflops;  // no FP8 units: upcast to 16-bit
  } else if (dtype == "int8" || dtype == "uint8") {
    tflops = d.int8_tops;
  } else if (dtype == "fp64") {
    tflops = 0;  // not in the table: no percentage rather than a wrong one
  } else {
    tflops = d.fp16_tflops;  // unknown type on tensor cores: the common training rate
  }
  return tflops * 1e12;
}

double PeakBytesPerSecond(const DevicePeaks& d) { return d.memory_gbps * 1e9; }

}  // namespace gpuspy::analysis
