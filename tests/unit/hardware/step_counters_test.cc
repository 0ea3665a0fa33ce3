// A step's counter readings (step_counters.h) on samples and kernels built by hand: every
// expected reading is computed here from the samples' own values and the overlaps.
#include <gtest/gtest.h>

#include "analysis/hardware/floor_text.h"
#include "analysis/hardware/step_counters.h"

namespace gpuspy::analysis {
namespace {

constexpr int64_t kUs = 1000, kMs = 1'000'000;

struct HandStep {
  StringTable strings;
  EventColumns events;
  StepWindow window{1, 0, 10 * kMs, "nvtx:ProfilerStep#.*"};

  void Kernel(std::string_view name, int64_t start, int64_t end, uint32_t device = 0) {
    events.kernels.push_back({start, end, events.kernels.size() + 1, strings.Intern(name), {device, 1, 7}, {}, 0});
  }
  // Ten 1 ms samples over the step: tensor, dram; SM activity 100 where given, 0 elsewhere.
  void Samples(const std::vector<std::pair<float, float>>& readings, uint32_t device = 0) {
    for (size_t i = 0; i < readings.size(); ++i) {
      const int64_t a = static_cast<int64_t>(i) * kMs;
      events.counter_samples.push_back(
          {a, a + kMs, device, readings[i].first, readings[i].second, 100.0f, -1.0f});
    }
  }
};

constexpr const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
constexpr const char* kAdd = "void at::native::vectorized_elementwise_kernel<4>";

TEST(StepCounters, StepReadingsAreTimeWeightedAndEachClassReadsTheSamplesItFills) {
  HandStep s;
  // GEMM over [0, 4 ms), elementwise over [5, 9 ms).
  s.Kernel(kGemm, 0, 4 * kMs);
  s.Kernel(kAdd, 5 * kMs, 9 * kMs);
  s.Samples({{80, 30}, {80, 30}, {82, 30}, {78, 34}, {0, 0}, {0, 90}, {0, 88}, {0, 92}, {0, 90}, {0, 0}});
  KernelClasses classes;
  const auto c = MeasureStepCounters(s.events, s.strings, s.window, classes);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->device_id(), 0u);
  EXPECT_EQ(c->sampled_ns(), 10 * kMs);
  // Every sample is 1 ms inside the step: the plain mean of the ten.
  EXPECT_DOUBLE_EQ(c->step().tensor_active_pct(), (80 + 80 + 82 + 78) / 10.0);
  EXPECT_DOUBLE_EQ(c->step().dram_throughput_pct(), (30 + 30 + 30 + 34 + 90 + 88 + 92 + 90) / 10.0);
  EXPECT_DOUBLE_EQ(c->step().sm_active_pct(), 100.0);
  EXPECT_DOUBLE_EQ(c->step().gpu_active_pct(), -1.0);  // never measured
  ASSERT_EQ(c->classes_size(), 2);
  EXPECT_EQ(c->classes(0).kernel_class(), "gemm_tc");
  EXPECT_EQ(c->classes(0).sampled_ns(), 4 * kMs);
  EXPECT_DOUBLE_EQ(c->classes(0).readings().tensor_active_pct(), 80.0);
  EXPECT_DOUBLE_EQ(c->classes(0).readings().dram_throughput_pct(), 31.0);
  EXPECT_EQ(c->classes(1).kernel_class(), "elementwise");
  EXPECT_DOUBLE_EQ(c->classes(1).readings().dram_throughput_pct(), 90.0);
  EXPECT_DOUBLE_EQ(c->classes(1).readings().tensor_active_pct(), 0.0);

  const std::vector<std::string> lines = [&] {
    v1::StepFloor f;
    *f.mutable_counters() = *c;
    return CounterLines(f);
  }();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "counters (device 0, 10.0 ms sampled): tensor pipes 32% busy, DRAM 48% of peak "
                      "bandwidth, SMs 100% active");
  EXPECT_EQ(lines[1], "  gemm_tc (4.0 ms sampled): tensor pipes 80% busy, DRAM 31% of peak bandwidth, "
                      "SMs 100% active");
}

TEST(StepCounters, ASampleTheClassFillsJustUnderTheThresholdIsNotItsReading) {
  HandStep s;
  // The GEMM fills sample 0 entirely and 0.79 of sample 1 (the fill threshold is 0.8); then
  // 0.8 exactly of sample 3.
  s.Kernel(kGemm, 0, 1 * kMs + 790 * kUs);
  s.Kernel(kGemm, 3 * kMs, 3 * kMs + 800 * kUs);
  s.Samples({{80, 30}, {60, 30}, {0, 0}, {70, 30}});
  KernelClasses classes;
  const auto c = MeasureStepCounters(s.events, s.strings, s.window, classes);
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->classes_size(), 1);
  EXPECT_EQ(c->classes(0).sampled_ns(), 2 * kMs);  // samples 0 and 3
  EXPECT_DOUBLE_EQ(c->classes(0).readings().tensor_active_pct(), 75.0);
  EXPECT_EQ(c->sampled_ns(), 4 * kMs);
}

TEST(StepCounters, SamplesStraddlingTheStepWeighOnlyTheirPartInsideIt) {
  HandStep s;
  s.window = {1, 500 * kUs, 2 * kMs, "nvtx:ProfilerStep#.*"};
  s.Samples({{100, 0}, {40, 0}, {10, 0}});  // [0, 1), [1, 2), [2, 3) ms
  KernelClasses classes;
  const auto c = MeasureStepCounters(s.events, s.strings, s.window, classes);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->sampled_ns(), 1500 * kUs);
  EXPECT_DOUBLE_EQ(c->step().tensor_active_pct(), (0.5 * 100 + 1.0 * 40) / 1.5);
}

TEST(StepCounters, TheDeviceReadIsTheOneRunningTheStepsKernels) {
  HandStep s;
  s.Kernel(kGemm, 0, 4 * kMs, /*device=*/1);
  s.Kernel(kAdd, 0, 1 * kMs, /*device=*/0);
  s.Samples({{5, 5}, {5, 5}}, /*device=*/0);
  s.Samples({{90, 10}, {90, 10}}, /*device=*/1);
  KernelClasses classes;
  const auto c = MeasureStepCounters(s.events, s.strings, s.window, classes);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->device_id(), 1u);
  EXPECT_DOUBLE_EQ(c->step().tensor_active_pct(), 90.0);
}

TEST(StepCounters, NoSampleInTheStepIsNoReading) {
  HandStep s;
  s.Kernel(kGemm, 0, 4 * kMs);
  KernelClasses classes;
  EXPECT_FALSE(MeasureStepCounters(s.events, s.strings, s.window, classes).has_value());
  // A sample that ends where the step starts is outside it.
  s.events.counter_samples.push_back({-kMs, 0, 0, 50, 50, 50, 50});
  EXPECT_FALSE(MeasureStepCounters(s.events, s.strings, s.window, classes).has_value());
}

}  // namespace
}  // namespace gpuspy::analysis
