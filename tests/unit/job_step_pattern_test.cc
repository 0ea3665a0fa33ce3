// QueryEngine::SetStepPattern on a live job: batches keep arriving, indexed by ingest with the
// new pattern, while the job's stored batches are read again. A batch stored after the pass read
// past it and before the steps are replaced must keep its steps (the catch-up pass).
#include <gtest/gtest.h>

#include <functional>

#include "codec/batch_encoder.h"
#include "collector/ingest/batch_ingestor.h"
#include "collector/live/job_step_patterns.h"
#include "collector/query/query_engine.h"
#include "tests/support/query_engine_parts.h"
#include "tests/support/subprocess.h"

namespace gpuspy::collector {
namespace {

// Forwards everything to the real store; runs `before_replace` once, just before ReplaceSteps:
// ingest storing a batch in the middle of a pattern change.
class StoreWithAHook final : public Store {
 public:
  explicit StoreWithAHook(Store* inner) : s_(inner) {}
  std::function<void()> before_replace;

  absl::StatusOr<uint64_t> UpsertProcess(const v1::ProcessIdentity& id, int64_t now) override {
    return s_->UpsertProcess(id, now);
  }
  absl::StatusOr<ProcessRecord> GetProcess(uint64_t p) override { return s_->GetProcess(p); }
  absl::StatusOr<std::vector<ProcessRecord>> ListProcesses(const std::string& j) override {
    return s_->ListProcesses(j);
  }
  absl::Status AppendDictionary(uint64_t p, const v1::Dictionary& d) override { return s_->AppendDictionary(p, d); }
  absl::StatusOr<v1::Dictionary> LoadDictionary(uint64_t p) override { return s_->LoadDictionary(p); }
  absl::Status AppendBatch(const StoredBatch& b) override { return s_->AppendBatch(b); }
  absl::StatusOr<std::vector<StoredBatch>> ReadBatches(uint64_t p, int64_t from, int64_t to) override {
    return s_->ReadBatches(p, from, to);
  }
  absl::StatusOr<std::vector<StoredBatch>> ReadBatchesAfter(uint64_t p, uint64_t after, size_t limit) override {
    return s_->ReadBatchesAfter(p, after, limit);
  }
  absl::StatusOr<std::vector<BatchMark>> ListBatchMarks(uint64_t p) override { return s_->ListBatchMarks(p); }
  absl::Status UpsertSteps(const std::vector<StepRecord>& steps) override { return s_->UpsertSteps(steps); }
  absl::StatusOr<std::vector<StepRecord>> ListSteps(uint64_t p) override { return s_->ListSteps(p); }
  absl::Status ReplaceSteps(uint64_t p, const std::vector<StepRecord>& steps) override {
    if (before_replace) std::exchange(before_replace, nullptr)();
    return s_->ReplaceSteps(p, steps);
  }
  absl::Status SetJobStepPattern(const std::string& j, const std::string& pattern) override {
    return s_->SetJobStepPattern(j, pattern);
  }
  absl::StatusOr<std::string> GetJobStepPattern(const std::string& j) override { return s_->GetJobStepPattern(j); }
  absl::StatusOr<uint64_t> DeleteProcesses(const std::vector<uint64_t>& ids) override {
    return s_->DeleteProcesses(ids);
  }
  absl::StatusOr<uint64_t> RenameJob(const std::string& from, const std::string& to) override {
    return s_->RenameJob(from, to);
  }
  absl::StatusOr<std::vector<ProcessRecord>> FindByContentHash(const std::string& h) override {
    return s_->FindByContentHash(h);
  }
  absl::StatusOr<uint64_t> EnforceRetention(const RetentionPolicy& policy, int64_t now) override {
    return s_->EnforceRetention(policy, now);
  }
  StoreStats Stats() override { return s_->Stats(); }
  absl::Status Flush() override { return s_->Flush(); }

 private:
  Store* s_;
};

class SetStepPatternTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ingestor_.set_job_patterns(&patterns_);
    v1::ProcessIdentity id;
    id.set_process_key("test:live:0");
    id.set_job_id("live");
    process_ = ingestor_.Hello(id, 1)->process_id();
    for (int i = 1; i <= 3; ++i) SendIteration(i);
    engine_.set_job_patterns(&patterns_);
  }

  // One batch: a kernel inside an NVTX range "iter <i>" (not a step under the default pattern).
  void SendIteration(int i) {
    EventColumns ev;
    const int64_t t = i * 1'000'000;
    ev.nvtx_ranges.push_back({t, t + 900'000, strings_.Intern("user"), strings_.Intern("iter " + std::to_string(i)), 1, 0});
    ev.kernels.push_back({t + 100'000, t + 800'000, static_cast<uint64_t>(i), strings_.Intern("gemm"), {0, 1, 7}, {}, 0});
    v1::EventBatch b;
    encoder_.Encode(ev, ++sequence_, {}, &b);
    ASSERT_TRUE(ingestor_.Ingest(process_, b).ok());
  }

  std::vector<int64_t> StepNumbers() {
    std::vector<int64_t> out;
    const absl::StatusOr<std::vector<StepRecord>> steps = parts_.store->ListSteps(process_);
    EXPECT_TRUE(steps.ok()) << steps.status();
    for (const StepRecord& s : steps.value_or(std::vector<StepRecord>{})) out.push_back(s.number);
    return out;
  }

  testing::TempDir dir_;
  testing::QueryEngineParts parts_{dir_.path()};
  StoreWithAHook store_{parts_.store.get()};
  JobStepPatterns patterns_{&store_, analysis::kDefaultStepPattern};
  BatchIngestor ingestor_{&store_, parts_.dictionaries.get(), &parts_.counters, analysis::StepSegmenter()};
  QueryEngine engine_{&store_, parts_.dictionaries.get(), &parts_.counters, &parts_.connections};
  StringTable strings_;
  BatchEncoder encoder_{&strings_};
  uint64_t process_ = 0;
  uint64_t sequence_ = 0;
};

TEST_F(SetStepPatternTest, ABatchStoredDuringThePatternChangeKeepsItsSteps) {
  ASSERT_TRUE(StepNumbers().empty());
  // Ingest stores iteration 4 (and indexes it with the new pattern) after the pass has read the
  // first three batches and before their steps replace the process's.
  store_.before_replace = [&] { SendIteration(4); };
  v1::SetStepPatternRequest req;
  req.set_job_id("live");
  req.set_step_pattern(R"(iter (\d+))");
  absl::StatusOr<v1::SetStepPatternResponse> resp = engine_.SetStepPattern(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(StepNumbers(), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(resp->nvtx_steps(), 4u);
  // Later batches are indexed with it by ingest.
  SendIteration(5);
  EXPECT_EQ(StepNumbers(), (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace gpuspy::collector
