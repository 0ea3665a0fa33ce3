// The injected core's GPUSPY_* configuration (inject/core/core_config.h) through a lookup
// function instead of the process environment.
#include "inject/core/core_config.h"

#include <gtest/gtest.h>

#include <map>

namespace gpuspy::inject {
namespace {

CoreConfig Config(const std::map<std::string, std::string>& env, std::string* warnings) {
  return ConfigFromLookup(
      [&env](const char* name) -> std::string {
        auto it = env.find(name);
        return it == env.end() ? std::string() : it->second;
      },
      warnings);
}

TEST(CoreConfig, NothingSetGivesTheDefaults) {
  std::string warnings;
  const CoreConfig c = Config({}, &warnings);
  EXPECT_EQ(warnings, "");
  EXPECT_EQ(c.mode, CaptureMode::kAlways);
  EXPECT_EQ(c.buffer_bytes, 4ull << 20);
  EXPECT_EQ(c.batch_events, 4096u);
  EXPECT_FALSE(c.collector.empty());
  EXPECT_FALSE(c.spill_dir.empty());
  EXPECT_FALSE(c.kinds.graph);
}

TEST(CoreConfig, ValuesInRangeAreTaken) {
  std::string warnings;
  const CoreConfig c = Config({{"GPUSPY_COLLECTOR", "unix:/x.sock"},
                               {"GPUSPY_MODE", "ondemand"},
                               {"GPUSPY_BUFFER_BYTES", "65536"},
                               {"GPUSPY_SPILL_BYTES", "0"},
                               {"GPUSPY_KINDS", "kernel,graph"},
                               {"GPUSPY_LOG", "debug"}},
                              &warnings);
  EXPECT_EQ(warnings, "");
  EXPECT_EQ(c.collector, "unix:/x.sock");
  EXPECT_EQ(c.mode, CaptureMode::kOnDemand);
  EXPECT_EQ(c.buffer_bytes, 65536u);
  EXPECT_EQ(c.spill_max_bytes, 0u);
  EXPECT_TRUE(c.kinds.kernel);
  EXPECT_TRUE(c.kinds.graph);
  EXPECT_FALSE(c.kinds.memcpy);
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
}

TEST(CoreConfig, MalformedOrOutOfRangeValuesKeepDefaultsWithOneWarningEach) {
  std::string warnings;
  const CoreConfig c = Config({{"GPUSPY_BUFFER_BYTES", "99999999999999999999"},
                               {"GPUSPY_MAX_BUFFERS", "-1"},
                               {"GPUSPY_FLUSH_MS", "1e3"},
                               {"GPUSPY_MODE", "sometimes"},
                               {"GPUSPY_KINDS", "kernel,bogus"}},
                              &warnings);
  EXPECT_EQ(c.buffer_bytes, 4ull << 20);
  EXPECT_EQ(c.max_buffers, 32u);
  EXPECT_EQ(c.flush_period_ms, 100u);
  EXPECT_EQ(c.mode, CaptureMode::kAlways);
  for (const char* name : {"GPUSPY_BUFFER_BYTES", "GPUSPY_MAX_BUFFERS", "GPUSPY_FLUSH_MS",
                           "GPUSPY_MODE", "bogus"}) {
    EXPECT_NE(warnings.find(name), std::string::npos) << name << " in " << warnings;
  }
}

TEST(CoreConfig, EmptyValueCountsAsUnset) {
  std::string warnings;
  const CoreConfig c = Config({{"GPUSPY_COLLECTOR", ""}, {"GPUSPY_BATCH_EVENTS", ""}}, &warnings);
  EXPECT_EQ(warnings, "");
  EXPECT_FALSE(c.collector.empty());
  EXPECT_EQ(c.batch_events, 4096u);
}

TEST(CoreConfig, CallSitesDefaultToOnWithAdaptiveLaunchSamplingAndTorchSkipped) {
  std::string warnings;
  const CoreConfig c = Config({}, &warnings);
  EXPECT_TRUE(c.call_sites.enabled);
  EXPECT_TRUE(c.call_sites.launch_auto);
  EXPECT_TRUE(c.call_sites.frames.native);
  EXPECT_EQ(c.call_sites.frames.skip, (std::vector<std::string>{"/torch/", "<frozen "}));
}

TEST(CoreConfig, CallSiteVariablesAreTakenAndBadOnesWarned) {
  std::string warnings;
  CoreConfig c = Config({{"GPUSPY_CALLSITES", "0"},
                         {"GPUSPY_CALLSITE_LAUNCHES", "100"},
                         {"GPUSPY_CALLSITE_NATIVE", "0"},
                         {"GPUSPY_CALLSITE_SKIP", "/torch/, /lightning/"}},
                        &warnings);
  EXPECT_EQ(warnings, "");
  EXPECT_FALSE(c.call_sites.enabled);
  EXPECT_FALSE(c.call_sites.launch_auto);
  EXPECT_EQ(c.call_sites.launch_period, 100u);
  EXPECT_FALSE(c.call_sites.frames.native);
  EXPECT_EQ(c.call_sites.frames.skip, (std::vector<std::string>{"/torch/", "/lightning/"}));

  c = Config({{"GPUSPY_CALLSITE_SKIP", "none"}, {"GPUSPY_CALLSITE_LAUNCHES", "0"}}, &warnings);
  EXPECT_TRUE(c.call_sites.frames.skip.empty());
  EXPECT_EQ(c.call_sites.launch_period, 0u);
  EXPECT_FALSE(c.call_sites.launch_auto);

  c = Config({{"GPUSPY_CALLSITES", "yes"}, {"GPUSPY_CALLSITE_LAUNCHES", "often"}}, &warnings);
  EXPECT_TRUE(c.call_sites.enabled);
  EXPECT_TRUE(c.call_sites.launch_auto);
  EXPECT_NE(warnings.find("GPUSPY_CALLSITES='yes'"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("GPUSPY_CALLSITE_LAUNCHES='often'"), std::string::npos) << warnings;
}

TEST(CoreConfig, CallersDefaultToOneAndStayWithinTheirBound) {
  std::string warnings;
  EXPECT_EQ(Config({}, &warnings).call_sites.frames.callers, 1);
  EXPECT_EQ(Config({{"GPUSPY_CALLSITE_CALLERS", "3"}}, &warnings).call_sites.frames.callers, 3);
  EXPECT_EQ(warnings, "");
  // Past kMaxCallers: warned, the default kept.
  EXPECT_EQ(Config({{"GPUSPY_CALLSITE_CALLERS", "9"}}, &warnings).call_sites.frames.callers, 1);
  EXPECT_NE(warnings.find("GPUSPY_CALLSITE_CALLERS='9' is not a number in [0, 4]"), std::string::npos)
      << warnings;
}

TEST(CoreConfig, TheHostSamplerIsOnAt200HzAndOffWithoutWhatItNeeds) {
  std::string warnings;
  EXPECT_EQ(Config({}, &warnings).host_sample_hz, 200u);
  EXPECT_EQ(Config({{"GPUSPY_HOST_SAMPLE_HZ", "0"}}, &warnings).host_sample_hz, 0u);
  EXPECT_EQ(Config({{"GPUSPY_HOST_SAMPLE_HZ", "1000"}}, &warnings).host_sample_hz, 1000u);
  EXPECT_EQ(warnings, "");
  // It watches every launch's callback to see the gaps: no call sites, or launches unwatched, is
  // no sampler.
  EXPECT_EQ(Config({{"GPUSPY_CALLSITES", "0"}}, &warnings).host_sample_hz, 0u);
  EXPECT_EQ(Config({{"GPUSPY_CALLSITE_LAUNCHES", "0"}}, &warnings).host_sample_hz, 0u);
  EXPECT_EQ(Config({{"GPUSPY_CALLSITE_LAUNCHES", "16"}}, &warnings).host_sample_hz, 200u);
  // Past kMaxHostSampleHz: warned, the default kept.
  EXPECT_EQ(Config({{"GPUSPY_HOST_SAMPLE_HZ", "5000"}}, &warnings).host_sample_hz, 200u);
  EXPECT_NE(warnings.find("GPUSPY_HOST_SAMPLE_HZ='5000' is not a number in [0, 2000]"), std::string::npos)
      << warnings;
}

TEST(CoreConfig, CountersAreOffByDefaultAndTheirIntervalStaysInBounds) {
  std::string warnings;
  EXPECT_FALSE(Config({}, &warnings).counters.enabled);
  EXPECT_EQ(Config({}, &warnings).counters.interval_us, 1000u);
  EXPECT_TRUE(Config({{"GPUSPY_COUNTERS", "1"}}, &warnings).counters.enabled);
  EXPECT_EQ(Config({{"GPUSPY_COUNTER_INTERVAL_US", "20"}}, &warnings).counters.interval_us, 20u);
  EXPECT_EQ(warnings, "");
  // Near misses: under the bound, and a flag that is not 0 or 1.
  EXPECT_EQ(Config({{"GPUSPY_COUNTER_INTERVAL_US", "19"}}, &warnings).counters.interval_us, 1000u);
  EXPECT_NE(warnings.find("GPUSPY_COUNTER_INTERVAL_US='19' is not a number in [20, 1000000]"),
            std::string::npos)
      << warnings;
  EXPECT_FALSE(Config({{"GPUSPY_COUNTERS", "yes"}}, &warnings).counters.enabled);
  EXPECT_NE(warnings.find("GPUSPY_COUNTERS='yes' is not 0 or 1"), std::string::npos) << warnings;
}

}  // namespace
}  // namespace gpuspy::inject
