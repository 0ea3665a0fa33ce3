// A step's work (step_work.h) and its floor against a device (step_floor.h), on a step built by
// hand: every figure is computed here from the events' own numbers.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/hardware/device_peaks.h"
#include "analysis/hardware/floor_text.h"
#include "analysis/hardware/step_floor.h"
#include "analysis/hardware/step_work.h"

namespace gpuspy::analysis {
namespace {

constexpr int64_t kUs = 1000, kMs = 1'000'000;
constexpr uint32_t kThread = 7;

struct HandStep {
  StringTable strings;
  EventColumns events;
  StepWindow window{1, 0, 10 * kMs, "nvtx:ProfilerStep#.*"};
  // What the step holds, for the hand computations.
  uint64_t mm_flops = 2ull * 8192 * 8192 * 8192;
  uint64_t mm_bytes = 3ull * 8192 * 8192 * 2;
  uint64_t attention_flops = 4ull * 4 * 16 * 2048 * 2048 * 128;
  uint64_t attention_bytes = 4ull * 4 * 16 * 2048 * 128 * 2;
  uint64_t add_bytes = 3ull * 4 * (1 << 24);
  int64_t busy_ns = 4 * kMs + 200 * kUs;  // the union of the kernels below

  HandStep() {
    const StringRef bf16 = strings.Intern("c10::BFloat16"), fp32 = strings.Intern("float");
    auto op = [&](int64_t start, int64_t end, std::string_view name, StringRef dtype, uint64_t flops,
                  uint64_t bytes) {
      events.op_works.push_back({start, end, kThread, strings.Intern(name), dtype, flops, bytes,
                                 WorkSource::kInputShapes});
    };
    auto launch = [&](int64_t at, uint64_t corr, std::string_view kernel, int64_t start, int64_t end) {
      events.apis.push_back({at, at + 5 * kUs, corr, ApiDomain::kRuntime, 211,
                             strings.Intern("cudaLaunchKernel"), kThread, 0});
      events.kernels.push_back({start, end, corr, strings.Intern(kernel), {0, 1, 7}, {}, 0});
    };
    op(100 * kUs, 200 * kUs, "aten::mm", bf16, mm_flops, mm_bytes);
    launch(150 * kUs, 1, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn", 2 * kMs, 4 * kMs);
    // Nested attention ops: only the outer one counts.
    op(300 * kUs, 500 * kUs, "aten::scaled_dot_product_attention", bf16, attention_flops, attention_bytes);
    op(310 * kUs, 490 * kUs, "aten::_scaled_dot_product_flash_attention", bf16, attention_flops,
       attention_bytes);
    launch(320 * kUs, 2, "flash_fwd_kernel", 4 * kMs, 5 * kMs);
    op(600 * kUs, 650 * kUs, "aten::add", fp32, 0, add_bytes);
    launch(610 * kUs, 3, "vectorized_elementwise_kernel", 5 * kMs, 5 * kMs + 200 * kUs);
    // A CPU tensor's matmul: no kernel, counts nowhere.
    op(700 * kUs, 800 * kUs, "aten::mm", fp32, 1'000'000'000, 0);
    // Communication outside any op: stays as measured.
    launch(900 * kUs, 4, "ncclKernel_AllReduce_RING_LL_Sum_float", 6 * kMs, 7 * kMs);
  }
};

TEST(StepWork, SumsTheOutermostOpsWithGpuWorkByKindOfMath) {
  HandStep s;
  KernelClasses classes;
  const v1::StepFloor f = MeasureStepWork(s.events, s.strings, s.window, s.busy_ns, classes);
  ASSERT_EQ(f.work_size(), 2);
  const v1::WorkBucket& matmul = f.work(0);
  EXPECT_EQ(matmul.kind(), v1::WORK_KIND_MATMUL_TENSOR);
  EXPECT_EQ(matmul.dtype(), "bf16");
  EXPECT_EQ(matmul.ops(), 2u);
  EXPECT_EQ(matmul.flops(), s.mm_flops + s.attention_flops);
  EXPECT_EQ(matmul.kernel_ns(), 3 * kMs);
  EXPECT_DOUBLE_EQ(matmul.achieved_flops_per_s(), (s.mm_flops + s.attention_flops) / 3e-3);
  const v1::WorkBucket& memory = f.work(1);
  EXPECT_EQ(memory.kind(), v1::WORK_KIND_MEMORY);
  EXPECT_EQ(memory.dtype(), "");
  EXPECT_EQ(memory.bytes(), s.add_bytes);
  EXPECT_EQ(memory.kernel_ns(), 200 * kUs);
  EXPECT_EQ(f.covered_kernel_ns(), 3 * kMs + 200 * kUs);
  EXPECT_EQ(f.flops(), s.mm_flops + s.attention_flops);
  EXPECT_EQ(f.flops_source(), v1::WORK_SOURCE_INPUT_SHAPES);
  EXPECT_DOUBLE_EQ(f.achieved_flops_per_s(), (s.mm_flops + s.attention_flops) / 10e-3);
  EXPECT_TRUE(f.notes().empty());
}

TEST(StepFloor, RooflineFloorAndMfuOnAKnownDevice) {
  HandStep s;
  KernelClasses classes;
  v1::StepFloor f = MeasureStepWork(s.events, s.strings, s.window, s.busy_ns, classes);
  const DevicePeaks* h100 = FindDevicePeaks("NVIDIA H100 80GB HBM3", 80ull << 30);
  ApplyDevicePeaks("NVIDIA H100 80GB HBM3", h100, 10 * kMs, &f);
  const double flops = static_cast<double>(s.mm_flops + s.attention_flops);
  // Compute-bound at 989 TFLOP/s: (1.10e12 + 1.37e11) / 989e12 = 1.251 ms.
  const int64_t matmul_roofline = std::llround(flops / 989e12 * 1e9);
  const int64_t memory_roofline = std::llround(static_cast<double>(s.add_bytes) / 3350e9 * 1e9);
  EXPECT_EQ(f.work(0).roofline_ns(), matmul_roofline);
  EXPECT_EQ(f.work(1).roofline_ns(), memory_roofline);
  EXPECT_DOUBLE_EQ(f.work(0).flops_fraction(), flops / 3e-3 / 989e12);
  EXPECT_DOUBLE_EQ(f.work(1).bytes_fraction(), s.add_bytes / 200e-6 / 3350e9);
  // The all-reduce's 1 ms stays as measured.
  EXPECT_EQ(f.floor_ns(), 1 * kMs + matmul_roofline + memory_roofline);
  EXPECT_DOUBLE_EQ(f.mfu(), flops / (10e-3 * 989e12));
  EXPECT_TRUE(f.device_known());
  EXPECT_NE(FloorLine(f, 10 * kMs).find("MFU 13%"), std::string::npos) << FloorLine(f, 10 * kMs);
}

TEST(StepFloor, AnUnknownDeviceShowsAchievedRatesOnly) {
  HandStep s;
  KernelClasses classes;
  v1::StepFloor f = MeasureStepWork(s.events, s.strings, s.window, s.busy_ns, classes);
  ApplyDevicePeaks("Tesla T4", FindDevicePeaks("Tesla T4", 0), 10 * kMs, &f);
  EXPECT_FALSE(f.device_known());
  EXPECT_EQ(f.floor_ns(), 0);
  EXPECT_EQ(f.mfu(), 0);
  EXPECT_GT(f.work(0).achieved_flops_per_s(), 0);
  EXPECT_EQ(f.work(0).flops_fraction(), 0);
  ASSERT_EQ(f.notes_size(), 1);
  EXPECT_NE(f.notes(0).find("not in the peak table"), std::string::npos);
  // A cached analysis set against its device again says it once.
  ApplyDevicePeaks("Tesla T4", FindDevicePeaks("Tesla T4", 0), 10 * kMs, &f);
  EXPECT_EQ(f.notes_size(), 1);
}

TEST(StepFloor, AStepWithoutWorkSaysWhatWouldGiveIt) {
  HandStep s;
  s.events.op_works.clear();
  s.events.nvtx_ranges.push_back({100 * kUs, 200 * kUs, s.strings.Intern(kCpuOpDomain),
                                  s.strings.Intern("aten::mm"), kThread, 0});
  KernelClasses classes;
  v1::StepFloor f = MeasureStepWork(s.events, s.strings, s.window, s.busy_ns, classes);
  EXPECT_EQ(f.work_size(), 0);
  ASSERT_EQ(f.notes_size(), 1);
  EXPECT_NE(f.notes(0).find("record_shapes=True, with_flops=True"), std::string::npos);
  // A live capture (no framework ops) is told where FLOPs come from instead.
  s.events.nvtx_ranges.clear();
  f = MeasureStepWork(s.events, s.strings, s.window, s.busy_ns, classes);
  ASSERT_EQ(f.notes_size(), 1);
  EXPECT_NE(f.notes(0).find("no framework ops"), std::string::npos);
}

TEST(StepFloor, FloatMatmulsOnCudaCoresAreMeasuredAgainstFp32) {
  StringTable strings;
  EventColumns events;
  const uint64_t flops = 2ull * 4096 * 4096 * 4096;
  events.op_works.push_back({0, 100 * kUs, 1, strings.Intern("aten::mm"), strings.Intern("float"), flops,
                             0, WorkSource::kProfilerFlops});
  events.apis.push_back({50 * kUs, 60 * kUs, 9, ApiDomain::kRuntime, 211, strings.Intern("cudaLaunchKernel"), 1, 0});
  events.kernels.push_back({1 * kMs, 11 * kMs, 9, strings.Intern("volta_sgemm_128x64_nn"), {0, 1, 7}, {}, 0});
  KernelClasses classes;
  v1::StepFloor f = MeasureStepWork(events, strings, {1, 0, 20 * kMs, ""}, 10 * kMs, classes);
  ASSERT_EQ(f.work_size(), 1);
  EXPECT_EQ(f.work(0).kind(), v1::WORK_KIND_MATMUL_SIMT);
  EXPECT_EQ(f.flops_source(), v1::WORK_SOURCE_PROFILER_FLOPS);
  const DevicePeaks* a100 = FindDevicePeaks("NVIDIA A100-SXM4-40GB", 40ull << 30);
  ApplyDevicePeaks("NVIDIA A100-SXM4-40GB", a100, 20 * kMs, &f);
  EXPECT_DOUBLE_EQ(f.work(0).peak_flops_per_s(), 19.5e12);
  EXPECT_EQ(f.floor_ns(), std::llround(static_cast<double>(flops) / 19.5e12 * 1e9));
}

}  // namespace
}  // namespace gpuspy::analysis
