// An excerpt of a real trace (the shape of HTA's trace-compare examples: a window cut from a longer
// run keeps its step ranges and GPU records, and few of the CUDA calls) cannot carry a verdict:
// its steps say insufficient_data with the reason. The same trace whole is judged as before
// (the near miss). The counts the reason gives are checked against a count made here from the
// trace's own events.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/data_quality.h"
#include "analysis/detector_names.h"
#include "analysis/in_memory_batches.h"
#include "analysis/process_analysis.h"
#include "analysis/step_series.h"
#include "importers/kineto/kineto_reader.h"

namespace gpuspy {
namespace {

constexpr char kTrace[] = "nccl_a100.json.gz";
// The excerpt keeps one CUDA call in this many inside the last step (a sampled or cut recording).
constexpr size_t kKeptOneCallIn = 100;

std::vector<analysis::StepAnalysis> Analyze(const importers::KinetoTrace& t) {
  std::vector<analysis::StepAnalysis> steps =
      analysis::AnalyzeProcessSteps(analysis::CutIntoImportBatches(t.events), t.strings, 1);
  analysis::AnalyzeStepSeries(&steps);
  return steps;
}

bool CutReason(const v1::StepReport& r) {
  for (const std::string& reason : r.data_quality().reasons()) {
    if (reason.find("events were cut") != std::string::npos) return true;
  }
  return false;
}

TEST(RealTraceExcerpt, AStepThatLostItsCallsIsInsufficientAndTheWholeTraceIsNot) {
  const std::string path = std::string(SOURCE_DIR) + "/../shared/traces/" + kTrace;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  absl::StatusOr<importers::KinetoTrace> whole = importers::ReadKinetoTrace(path);
  ASSERT_TRUE(whole.ok()) << whole.status();

  // Near miss: the whole trace. No step of it lost its calls.
  const std::vector<analysis::StepAnalysis> steps = Analyze(*whole);
  ASSERT_GE(steps.size(), 3u);
  for (const analysis::StepAnalysis& s : steps) {
    EXPECT_FALSE(CutReason(s.report)) << "step " << s.report.step().number();
  }

  // The excerpt: the last step keeps 1 call in kKeptOneCallIn, every GPU record stays.
  const v1::Step& last = steps.back().report.step();
  importers::KinetoTrace excerpt = std::move(*whole);
  std::vector<ApiEvent> kept;
  size_t seen = 0;
  for (const ApiEvent& a : excerpt.events.apis) {
    const bool inside = a.start_ns >= last.start_ns() && a.start_ns < last.end_ns();
    if (!inside || seen++ % kKeptOneCallIn == 0) kept.push_back(a);
  }
  excerpt.events.apis = std::move(kept);

  // By hand: the last step's GPU records whose call is gone.
  absl::flat_hash_set<uint64_t> calls;
  for (const ApiEvent& a : excerpt.events.apis) calls.insert(a.correlation_id);
  uint64_t ops = 0, missing = 0;
  const auto count = [&](uint64_t correlation, int64_t start, int64_t end) {
    if (correlation == 0 || end <= last.start_ns() || start >= last.end_ns()) return;
    ++ops;
    if (!calls.contains(correlation)) ++missing;
  };
  for (const KernelEvent& k : excerpt.events.kernels) count(k.correlation_id, k.start_ns, k.end_ns);
  for (const MemcpyEvent& m : excerpt.events.memcpys) count(m.correlation_id, m.start_ns, m.end_ns);
  for (const MemsetEvent& m : excerpt.events.memsets) count(m.correlation_id, m.start_ns, m.end_ns);
  ASSERT_GT(missing, 10 * analysis::kMinMissingLaunchOps);

  const std::vector<analysis::StepAnalysis> cut = Analyze(excerpt);
  ASSERT_EQ(cut.size(), steps.size());
  const v1::StepReport& r = cut.back().report;
  EXPECT_EQ(analysis::DetectorName(r.primary_bottleneck()), "insufficient_data");
  ASSERT_TRUE(CutReason(r));
  EXPECT_THAT(r.data_quality().reasons(), ::testing::Contains(::testing::HasSubstr(
                                              absl::StrCat(missing, " of the step's ", ops, " GPU operations"))));
  // The steps before it keep their verdicts.
  for (size_t i = 0; i + 1 < cut.size(); ++i) {
    EXPECT_EQ(cut[i].report.primary_bottleneck(), steps[i].report.primary_bottleneck()) << "step " << i;
  }
}

}  // namespace
}  // namespace gpuspy
