// The what-if replay on the shared real traces: the unedited replay of every steady step must
// reproduce its recorded wall time within kMaxReplayError (2 %), so that the gains it predicts
// start from the step as it ran. Steps found by their kernels' period are cut at the host's launch
// of the period's first kernel (period_detector.cc) and replay like NVTX steps.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "analysis/detector_names.h"
#include "analysis/process_analysis.h"
#include "analysis/replay/what_if.h"
#include "analysis/step_series.h"
#include "importers/kineto/kineto_reader.h"
#include "tests/support/analyzed_trace.h"
#include "tests/support/trace_test_name.h"

namespace gpuspy {

using analysis::DetectorName;

namespace {

class RealTraceReplay : public ::testing::TestWithParam<const char*> {};

TEST_P(RealTraceReplay, UneditedReplayReproducesEverySteadyStep) {
  const std::string path = std::string(SOURCE_DIR) + "/../shared/traces/" + GetParam();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  // As `gpuspy analyze` finds them: NVTX steps, else period-detected steps, else time windows.
  absl::StatusOr<std::vector<analysis::StepAnalysis>> analysed = testing::AnalyzeTraceFile(path);
  ASSERT_TRUE(analysed.ok()) << analysed.status();
  const std::vector<analysis::StepAnalysis>& steps = *analysed;
  int replayed = 0;
  for (const analysis::StepAnalysis& s : steps) {
    const v1::StepReport& r = s.report;
    if (!r.steady_state() || r.data_quality().insufficient()) continue;
    const v1::StepReplay& replay = r.replay();
    ASSERT_TRUE(replay.available()) << "step " << r.step().number() << ": " << replay.unavailable_reason();
    EXPECT_LE(std::llabs(replay.replayed_ns() - replay.recorded_ns()),
              analysis::replay::kMaxReplayError * static_cast<double>(replay.recorded_ns()))
        << "step " << r.step().number();
    EXPECT_GT(replay.host_calls(), 0u);
    EXPECT_GT(replay.gpu_ops(), 0u);
    // A finding's gain never exceeds the step, and all fixes together save at least the largest.
    for (const v1::Finding& f : r.findings()) {
      EXPECT_LE(f.lost_ns(), replay.recorded_ns()) << DetectorName(f.detector());
    }
    if (!r.findings().empty()) {
      EXPECT_GE(replay.all_fixes_gain_ns(), r.findings(0).what_if().gain_ns());
    }
    ++replayed;
  }
  std::printf("%s: %d steady steps replayed\n", GetParam(), replayed);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RealTraceReplay,
                         ::testing::Values("nccl_a100.json.gz", "sampled_rank-0.json.gz",
                                           "sampled_rank-1.json.gz", "event_sync_a100.json.gz",
                                           "resnet50_2021_autograd_nw4.json.gz", "alexnet_a100.json.gz",
                                           "triton_a100.json.gz"),
                         [](const auto& info) { return testing::TraceTestName(info.param); });

}  // namespace
}  // namespace gpuspy
