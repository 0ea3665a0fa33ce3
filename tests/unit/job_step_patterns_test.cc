// Which pattern finds a job's steps (collector/live/job_step_patterns.h): the job's own once
// set, gpuspyd's otherwise, a bad one refused before it is stored, and a cached answer never
// outliving a change.
#include "collector/live/job_step_patterns.h"

#include <gtest/gtest.h>

#include "collector/storage/store.h"
#include "tests/support/subprocess.h"

namespace gpuspy::collector {
namespace {

class JobStepPatternsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Store>> s = OpenEmbeddedStore({.data_dir = dir_.path() + "/data"});
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }
  std::string PatternOf(JobStepPatterns& p, const std::string& job) {
    absl::StatusOr<std::shared_ptr<const analysis::StepSegmenter>> s = p.For(job);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? (*s)->pattern() : "";
  }
  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(JobStepPatternsTest, AJobsOwnPatternWinsOverTheDaemonsAndChangesAtOnce) {
  JobStepPatterns patterns(store_.get(), analysis::kDefaultStepPattern);
  EXPECT_EQ(PatternOf(patterns, "j"), analysis::kDefaultStepPattern);  // cached from here on
  ASSERT_TRUE(patterns.Set("j", R"(train_step_(\d+))").ok());
  EXPECT_EQ(PatternOf(patterns, "j"), R"(train_step_(\d+))");
  EXPECT_EQ(PatternOf(patterns, "other"), analysis::kDefaultStepPattern);
  EXPECT_EQ(*store_->GetJobStepPattern("j"), R"(train_step_(\d+))");
  // Another gpuspyd on the same store (a restart) finds it too.
  JobStepPatterns restarted(store_.get(), analysis::kDefaultStepPattern);
  EXPECT_EQ(PatternOf(restarted, "j"), R"(train_step_(\d+))");
  ASSERT_TRUE(patterns.Set("j", "").ok());
  EXPECT_EQ(PatternOf(patterns, "j"), analysis::kDefaultStepPattern);
}

TEST_F(JobStepPatternsTest, ABadPatternIsRefusedAndNothingChanges) {
  JobStepPatterns patterns(store_.get(), analysis::kDefaultStepPattern);
  ASSERT_TRUE(patterns.Set("j", "iter_(\\d+)").ok());
  const absl::Status bad = patterns.Set("j", "iter_(");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "step pattern 'iter_(' is not a valid RE2 regex: missing ): iter_(");
  EXPECT_EQ(patterns.Set("j", std::string(analysis::kMaxStepPatternBytes + 1, 'a')).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PatternOf(patterns, "j"), "iter_(\\d+)");
}

TEST_F(JobStepPatternsTest, ARenamedJobIsLookedUpAgain) {
  JobStepPatterns patterns(store_.get(), analysis::kDefaultStepPattern);
  v1::ProcessIdentity id;
  id.set_process_key("p");
  id.set_job_id("old");
  ASSERT_TRUE(store_->UpsertProcess(id, 1).ok());
  ASSERT_TRUE(patterns.Set("old", "iter_(\\d+)").ok());
  EXPECT_EQ(PatternOf(patterns, "new"), analysis::kDefaultStepPattern);
  ASSERT_TRUE(store_->RenameJob("old", "new").ok());
  patterns.Forget("old");
  patterns.Forget("new");
  EXPECT_EQ(PatternOf(patterns, "new"), "iter_(\\d+)");
  EXPECT_EQ(PatternOf(patterns, "old"), analysis::kDefaultStepPattern);
}

}  // namespace
}  // namespace gpuspy::collector
