// The hardware counters' metric names (inject/core/counter_sampler.h) against the CUDA toolkit's
// real libcupti: its profiler host API configures PM sampling for a chip without a GPU, so the
// names gpuspy asks for are checked by the library that will be asked, not by our reading of the
// docs (the fake accepts whatever we wrote into it).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "inject/core/counter_sampler.h"
#include "tests/unit/real_cupti.h"

namespace gpuspy::testing {
namespace {

using inject::kCounterMetrics;

class RealCuptiCounterMetrics : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    api_ = LoadRealCupti(&why);
    if (api_ == nullptr) GTEST_SKIP() << why;
    ASSERT_NE(api_->host_initialize, nullptr) << api_->path << " has no profiler host API";
    ASSERT_NE(api_->host_add_metrics, nullptr);
    ASSERT_NE(api_->host_metric_properties, nullptr);
    ASSERT_NE(api_->host_deinitialize, nullptr);
  }

  // A PM-sampling host object for `chip`; nullptr when the library refuses the chip.
  CUpti_Profiler_Host_Object* Host(const char* chip) {
    CUpti_Profiler_Host_Initialize_Params p;
    std::memset(&p, 0, sizeof(p));
    p.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
    p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    p.pChipName = chip;
    return api_->host_initialize(&p) == CUPTI_SUCCESS ? p.pHostObject : nullptr;
  }
  void Release(CUpti_Profiler_Host_Object* host) {
    CUpti_Profiler_Host_Deinitialize_Params p;
    std::memset(&p, 0, sizeof(p));
    p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
    p.pHostObject = host;
    (void)api_->host_deinitialize(&p);
  }
  CUptiResult Add(CUpti_Profiler_Host_Object* host, std::vector<const char*> metrics) {
    CUpti_Profiler_Host_ConfigAddMetrics_Params p;
    std::memset(&p, 0, sizeof(p));
    p.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
    p.pHostObject = host;
    p.ppMetricNames = metrics.data();
    p.numMetrics = metrics.size();
    return api_->host_add_metrics(&p);
  }

  const RealCupti* api_ = nullptr;
};

// The datacenter chips users run (A100, A10/A40, H100/H200, B200, RTX/L40-class Ada and
// Blackwell): every metric is known and reads in percent.
TEST_F(RealCuptiCounterMetrics, EveryChipUsersRunKnowsAllFourMetricsInPercent) {
  for (const char* chip : {"GA100", "GA102", "GH100", "AD102", "GB100", "GB202"}) {
    CUpti_Profiler_Host_Object* host = Host(chip);
    ASSERT_NE(host, nullptr) << chip;
    for (const char* metric : kCounterMetrics) {
      CUpti_Profiler_Host_GetMetricProperties_Params p;
      std::memset(&p, 0, sizeof(p));
      p.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
      p.pHostObject = host;
      p.pMetricName = metric;
      ASSERT_EQ(api_->host_metric_properties(&p), CUPTI_SUCCESS) << chip << " " << metric;
      EXPECT_STREQ(p.pDimUnit, "percent") << chip << " " << metric;
    }
    EXPECT_EQ(Add(host, {std::begin(kCounterMetrics), std::end(kCounterMetrics)}), CUPTI_SUCCESS) << chip;
    Release(host);
  }
}

TEST_F(RealCuptiCounterMetrics, AMisspelledMetricAndAVoltaChipAreRefused) {
  CUpti_Profiler_Host_Object* host = Host("GH100");
  ASSERT_NE(host, nullptr);
  const std::string typo = std::string(kCounterMetrics[0]) + "x";
  EXPECT_NE(Add(host, {typo.c_str()}), CUPTI_SUCCESS);
  Release(host);
  // PM sampling starts with Turing: a V100 gets no counters (the sampler says so and traces on).
  EXPECT_EQ(Host("GV100"), nullptr);
}

}  // namespace
}  // namespace gpuspy::testing
