// One process analysed step by step (analysis/process_analysis.h): the steps the rule finds, each
// analysed once over its window, the memory before it measured, and what a caller adds through
// the hooks (reuse, notes, stopping) applied the same way to any source.
#include "analysis/process_analysis.h"

#include <string>
#include <vector>

#include <google/protobuf/util/message_differencer.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/step_series.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::analysis {
namespace {

using google::protobuf::util::MessageDifferencer;

class ProcessAnalysisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    synthetic::SyntheticOptions o;
    o.scenario = synthetic::Scenario::kSyncStall;
    o.steps = 8;
    rank_ = synthetic::GenerateRank(o, 0);
    for (const EventColumns& s : rank_.steps) all_.Append(s);
    batches_ = CutIntoImportBatches(all_);
  }

  synthetic::SyntheticRank rank_;
  EventColumns all_;  // the batches are parts of these
  ImportBatches batches_;
};

TEST_F(ProcessAnalysisTest, EveryStepTheRuleFindsIsAnalysedOnceInStepOrder) {
  InMemoryBatches source(batches_, rank_.strings);
  absl::StatusOr<std::vector<StepWindow>> steps = FindSteps(source, StepPolicy{});
  ASSERT_TRUE(steps.ok());
  absl::StatusOr<ProcessAnalysis> a = AnalyzeProcess(source, StepPolicy{}, /*process_id=*/7);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->steps.size(), steps->size());
  EXPECT_EQ(a->steps.size(), rank_.steps.size());
  EXPECT_EQ(a->steps_analysed, a->steps.size());
  for (size_t i = 0; i < a->steps.size(); ++i) {
    const v1::Step& s = a->steps[i].report.step();
    EXPECT_EQ(s.number(), (*steps)[i].number);
    EXPECT_EQ(s.start_ns(), (*steps)[i].start_ns);
    EXPECT_EQ(s.end_ns(), (*steps)[i].end_ns);
    EXPECT_EQ(s.process_id(), 7u);
    EXPECT_GT(a->steps[i].report.breakdown().kernel_count(), 0u);
    EXPECT_EQ(a->steps[i].report.capture_note(), "");
  }
}

TEST_F(ProcessAnalysisTest, TheOfflineEntryPointIsAnalyzeProcessOverTheTraceInMemory) {
  InMemoryBatches source(batches_, rank_.strings);
  absl::StatusOr<ProcessAnalysis> a = AnalyzeProcess(source, StepPolicy{}, 3);
  ASSERT_TRUE(a.ok());
  const std::vector<StepAnalysis> offline = AnalyzeProcessSteps(batches_, rank_.strings, 3);
  ASSERT_EQ(offline.size(), a->steps.size());
  for (size_t i = 0; i < offline.size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(offline[i].report, a->steps[i].report)) << "step " << i;
  }
}

// Steps analysed in slices on several threads are the steps analysed one by one: the same reports
// (after the series pass, which reads the memory each slice measured before its first step), the
// same kernel names and collectives. A leaking job, so the stretch before each step matters.
TEST(ProcessAnalysisThreads, SlicesOnSeveralThreadsGiveWhatOneThreadGives) {
  synthetic::SyntheticOptions o;
  o.scenario = synthetic::Scenario::kMemoryLeak;
  o.steps = 9;
  const synthetic::SyntheticRank rank = synthetic::GenerateRank(o, 0);
  EventColumns all;
  for (const EventColumns& s : rank.steps) all.Append(s);
  const ImportBatches batches = CutIntoImportBatches(all);
  std::vector<StepAnalysis> one = AnalyzeProcessSteps(batches, rank.strings, 5, kDefaultStepPattern, 1);
  AnalyzeStepSeries(&one);
  ASSERT_EQ(one.size(), rank.steps.size());
  bool memory_measured = false;
  for (const StepAnalysis& a : one) memory_measured |= a.report.memory().reserved_start_bytes() > 0;
  ASSERT_TRUE(memory_measured) << "the scenario must give the series memory to compare";
  for (unsigned threads : {2u, 4u, 64u}) {
    std::vector<StepAnalysis> many = AnalyzeProcessSteps(batches, rank.strings, 5, kDefaultStepPattern, threads);
    AnalyzeStepSeries(&many);
    ASSERT_EQ(many.size(), one.size()) << threads << " threads";
    for (size_t i = 0; i < one.size(); ++i) {
      EXPECT_TRUE(MessageDifferencer::Equals(many[i].report, one[i].report))
          << threads << " threads, step " << i << ":\n" << many[i].report.DebugString() << "\nvs\n"
          << one[i].report.DebugString();
      EXPECT_EQ(many[i].kernel_names, one[i].kernel_names);
      EXPECT_EQ(many[i].collectives->ops.size(), one[i].collectives->ops.size());
    }
  }
}

TEST_F(ProcessAnalysisTest, AReusedStepIsTakenAsItIsWithItsNotesJoinedAndTheOthersAreAnalysed) {
  InMemoryBatches source(batches_, rank_.strings);
  absl::StatusOr<ProcessAnalysis> first = AnalyzeProcess(source, StepPolicy{}, 1);
  ASSERT_TRUE(first.ok());
  const int64_t kept_number = first->steps[2].report.step().number();
  ProcessAnalysisHooks hooks;
  hooks.reuse = [&](const StepWindow& w) -> absl::StatusOr<ProcessAnalysisHooks::Reused> {
    if (w.number != kept_number) return ProcessAnalysisHooks::Reused{};
    return ProcessAnalysisHooks::Reused{&first->steps[2], "2 stored batches are damaged"};
  };
  hooks.loss_note = [](const StepWindow&) { return std::string("capture incomplete: 5 events dropped"); };
  int kept = 0;
  hooks.keep = [&](const StepAnalysis&) {
    ++kept;
    return absl::OkStatus();
  };
  absl::StatusOr<ProcessAnalysis> second = AnalyzeProcess(source, StepPolicy{}, 1, hooks);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->steps_analysed, first->steps.size() - 1);
  EXPECT_EQ(kept, static_cast<int>(first->steps.size()) - 1) << "a reused step is not kept again";
  EXPECT_EQ(second->steps[2].report.capture_note(),
            "capture incomplete: 5 events dropped; 2 stored batches are damaged");
  EXPECT_EQ(second->window_notes[kept_number], "2 stored batches are damaged");
  EXPECT_EQ(second->steps[0].report.capture_note(), "capture incomplete: 5 events dropped");
  v1::StepReport reused = second->steps[2].report;
  reused.set_capture_note("");
  EXPECT_TRUE(MessageDifferencer::Equals(reused, first->steps[2].report));
}

TEST_F(ProcessAnalysisTest, AnErrorFromTheCallerEndsTheAnalysisWithIt) {
  InMemoryBatches source(batches_, rank_.strings);
  int asked = 0;
  ProcessAnalysisHooks hooks;
  hooks.proceed = [&] {
    return ++asked > 3 ? absl::CancelledError("stopping") : absl::OkStatus();
  };
  absl::StatusOr<ProcessAnalysis> a = AnalyzeProcess(source, StepPolicy{}, 1, hooks);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(asked, 4);
  hooks.proceed = nullptr;
  hooks.keep = [](const StepAnalysis&) { return absl::ResourceExhaustedError("over budget"); };
  EXPECT_EQ(AnalyzeProcess(source, StepPolicy{}, 1, hooks).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace gpuspy::analysis
