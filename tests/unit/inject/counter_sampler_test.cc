// The hardware counter sampler (inject/core/counter_sampler.h) driven on the fake CUPTI's PM
// sampling (tests/fake_cuda/fake_pm_sampling.cc), whose samples are computed from the simulated
// kernels and the profile each was launched with: every expected reading is known by construction.
#include <cupti.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "inject/core/counter_sampler.h"
#include "tests/fake_cuda/fake_cuda.h"

namespace gpuspy::inject {
namespace {

constexpr uint32_t kStream = 7;
constexpr int64_t kMs = 1'000'000;

CuptiApi::PmSampling FakeTable() {
  CuptiApi::PmSampling t;
  t.ProfilerInitialize = &::cuptiProfilerInitialize;
  t.DeviceGetChipName = &::cuptiDeviceGetChipName;
  t.GetCounterAvailability = &::cuptiPmSamplingGetCounterAvailability;
  t.HostInitialize = &::cuptiProfilerHostInitialize;
  t.HostDeinitialize = &::cuptiProfilerHostDeinitialize;
  t.HostConfigAddMetrics = &::cuptiProfilerHostConfigAddMetrics;
  t.HostGetConfigImageSize = &::cuptiProfilerHostGetConfigImageSize;
  t.HostGetConfigImage = &::cuptiProfilerHostGetConfigImage;
  t.HostGetNumOfPasses = &::cuptiProfilerHostGetNumOfPasses;
  t.HostEvaluateToGpuValues = &::cuptiProfilerHostEvaluateToGpuValues;
  t.Enable = &::cuptiPmSamplingEnable;
  t.SetConfig = &::cuptiPmSamplingSetConfig;
  t.GetCounterDataSize = &::cuptiPmSamplingGetCounterDataSize;
  t.CounterDataImageInitialize = &::cuptiPmSamplingCounterDataImageInitialize;
  t.Start = &::cuptiPmSamplingStart;
  t.Stop = &::cuptiPmSamplingStop;
  t.DecodeData = &::cuptiPmSamplingDecodeData;
  t.GetCounterDataInfo = &::cuptiPmSamplingGetCounterDataInfo;
  t.GetSampleInfo = &::cuptiPmSamplingCounterDataGetSampleInfo;
  return t;
}

int64_t FakeNow() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return static_cast<int64_t>(t);
}

class CounterSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"FAKE_PM_DENIED", "FAKE_PM_MAX_METRICS_PER_PASS", "FAKE_PM_UNKNOWN_METRIC"}) {
      unsetenv(v);
    }
    fake_cupti_reset_for_tests();
    table_ = FakeTable();
  }
  void TearDown() override { SetUp(); }

  // A GEMM-like kernel (80% tensor, 30% DRAM) of `ms`, then an elementwise one (0%, 90%) of `ms`,
  // then the GPU idle until both are done and `ms` more has passed.
  static void RunKernels(int ms) {
    fake_gpu_kernel_counters(80, 30);
    fake_cuda_launch_kernel("gemm", {1, 1, 1}, {1, 1, 1}, 0, kStream, static_cast<uint64_t>(ms) * kMs);
    fake_gpu_kernel_counters(0, 90);
    fake_cuda_launch_kernel("add", {1, 1, 1}, {1, 1, 1}, 0, kStream, static_cast<uint64_t>(ms) * kMs);
    fake_cuda_stream_synchronize(kStream);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }

  CuptiApi::PmSampling table_;
};

TEST_F(CounterSamplerTest, SamplesReadWhatTheKernelsDid) {
  fake_cuda_init();
  CounterSampler sampler(&table_, {.enabled = true, .interval_us = 1000}, FakeNow);
  sampler.Watch(0);
  ASSERT_EQ(sampler.sampled_devices(), 1u) << sampler.last_refusal();
  RunKernels(8);
  std::vector<CounterSampleEvent> samples;
  sampler.Poll(&samples);
  ASSERT_GE(samples.size(), 20u);
  int gemm = 0, add = 0, idle = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const CounterSampleEvent& s = samples[i];
    EXPECT_EQ(s.device_id, 0u);
    EXPECT_EQ(s.end_ns - s.start_ns, kMs);
    if (i > 0) {
      EXPECT_EQ(s.start_ns, samples[i - 1].end_ns);  // back to back, none lost
    }
    // Samples wholly inside one kernel read its profile exactly; idle ones read zero.
    if (s.sm_active_pct == 100.0f && s.tensor_active_pct == 80.0f) {
      EXPECT_EQ(s.dram_throughput_pct, 30.0f);
      ++gemm;
    } else if (s.sm_active_pct == 100.0f && s.dram_throughput_pct == 90.0f) {
      EXPECT_EQ(s.tensor_active_pct, 0.0f);
      ++add;
    } else if (s.sm_active_pct == 0.0f) {
      EXPECT_EQ(s.tensor_active_pct, 0.0f);
      ++idle;
    }
    EXPECT_EQ(s.gpu_active_pct, s.sm_active_pct);
  }
  EXPECT_GE(gemm, 6);
  EXPECT_GE(add, 6);
  EXPECT_GE(idle, 6);
  // Decoded once: the next poll has only what completed since.
  std::vector<CounterSampleEvent> more;
  sampler.Poll(&more);
  if (!more.empty()) {
    EXPECT_EQ(more.front().start_ns, samples.back().end_ns);
  }
}

TEST_F(CounterSamplerTest, CountersRestrictedToAdminsAreRefusedOnceWithTheReason) {
  setenv("FAKE_PM_DENIED", "1", 1);
  CounterSampler sampler(&table_, {.enabled = true, .interval_us = 1000}, FakeNow);
  sampler.Watch(0);
  sampler.Watch(0);  // not tried again
  EXPECT_EQ(sampler.sampled_devices(), 0u);
  EXPECT_NE(sampler.last_refusal().find("device 0: cuptiPmSamplingEnable: the GPU's performance "
                                        "counters are restricted to admin users"),
            std::string::npos)
      << sampler.last_refusal();
  std::vector<CounterSampleEvent> samples;
  sampler.Poll(&samples);
  EXPECT_TRUE(samples.empty());
}

TEST_F(CounterSamplerTest, OnlyTheMetricsThatFitOnePassAreConfigured) {
  setenv("FAKE_PM_MAX_METRICS_PER_PASS", "2", 1);
  CounterSampler sampler(&table_, {.enabled = true, .interval_us = 1000}, FakeNow);
  sampler.Watch(0);
  ASSERT_EQ(sampler.sampled_devices(), 1u) << sampler.last_refusal();
  RunKernels(3);
  std::vector<CounterSampleEvent> samples;
  sampler.Poll(&samples);
  ASSERT_FALSE(samples.empty());
  for (const CounterSampleEvent& s : samples) {
    EXPECT_GE(s.tensor_active_pct, 0.0f);
    EXPECT_GE(s.dram_throughput_pct, 0.0f);
    EXPECT_EQ(s.sm_active_pct, -1.0f);
    EXPECT_EQ(s.gpu_active_pct, -1.0f);
  }
}

TEST_F(CounterSamplerTest, AChipWithoutOneMetricSamplesTheOthers) {
  setenv("FAKE_PM_UNKNOWN_METRIC", kCounterMetrics[1], 1);  // DRAM throughput
  CounterSampler sampler(&table_, {.enabled = true, .interval_us = 1000}, FakeNow);
  sampler.Watch(0);
  ASSERT_EQ(sampler.sampled_devices(), 1u) << sampler.last_refusal();
  RunKernels(3);
  std::vector<CounterSampleEvent> samples;
  sampler.Poll(&samples);
  ASSERT_FALSE(samples.empty());
  bool busy = false;
  for (const CounterSampleEvent& s : samples) {
    EXPECT_EQ(s.dram_throughput_pct, -1.0f);
    EXPECT_GE(s.tensor_active_pct, 0.0f);
    EXPECT_GE(s.gpu_active_pct, 0.0f);
    busy |= s.sm_active_pct == 100.0f;
  }
  EXPECT_TRUE(busy);
}

TEST_F(CounterSamplerTest, StopAllDecodesTheRestAndASecondSessionStartsAgain) {
  CounterSampler sampler(&table_, {.enabled = true, .interval_us = 1000}, FakeNow);
  sampler.Watch(0);
  RunKernels(3);
  std::vector<CounterSampleEvent> first;
  sampler.StopAll(&first);
  EXPECT_GE(first.size(), 6u);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::vector<CounterSampleEvent> stopped;
  sampler.Poll(&stopped);
  EXPECT_TRUE(stopped.empty());  // nothing is sampled while stopped
  sampler.Watch(0);              // the next session (gpuspy attach after a detach)
  RunKernels(3);
  std::vector<CounterSampleEvent> second;
  sampler.Poll(&second);
  ASSERT_GE(second.size(), 6u);
  EXPECT_GE(second.front().start_ns, first.back().end_ns + 5 * kMs);
}

TEST_F(CounterSamplerTest, SamplesOnAnotherClockAreShiftedOntoCuptisNearMissIsNot) {
  for (const int64_t skew : {int64_t{5'000} * kMs, int64_t{500} * kMs}) {
    fake_cupti_reset_for_tests();
    CounterSampler sampler(&table_, {.enabled = true, .interval_us = 1000},
                           [skew] { return FakeNow() + skew; });
    sampler.Watch(0);
    RunKernels(2);
    std::vector<CounterSampleEvent> samples;
    const int64_t before = FakeNow();
    sampler.Poll(&samples);
    ASSERT_FALSE(samples.empty());
    const int64_t lag = before - samples.back().end_ns;  // on the fake's own clock, if unshifted
    if (skew > CounterSampler::kMaxClockMismatchNs) {
      EXPECT_NEAR(static_cast<double>(-lag), static_cast<double>(skew), 50.0 * kMs);
    } else {
      EXPECT_GE(lag, 0);
      EXPECT_LT(lag, 50 * kMs);
    }
  }
}

TEST_F(CounterSamplerTest, WithoutPmSamplingInThisCuptiTheCountersAreOff) {
  CuptiApi::PmSampling missing = table_;
  missing.DecodeData = nullptr;
  CounterSampler sampler(&missing, {.enabled = true, .interval_us = 1000}, FakeNow);
  sampler.Watch(0);
  EXPECT_EQ(sampler.sampled_devices(), 0u);
  EXPECT_NE(sampler.last_refusal().find("this CUPTI has no PM sampling"), std::string::npos);
}

}  // namespace
}  // namespace gpuspy::inject
