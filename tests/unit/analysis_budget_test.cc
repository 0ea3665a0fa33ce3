// The analysis budget (--analysis-cache-mb) covers the cache and the queries in progress: a
// query that would take them past it is refused with RESOURCE_EXHAUSTED and a message naming the
// flag, instead of growing; the only query in progress is never refused; cached analyses make
// room for work in progress.
#include "collector/query/analysis_budget.h"

#include <gtest/gtest.h>

#include "collector/ingest/batch_ingestor.h"
#include "collector/query/query_engine.h"
#include "tests/support/query_engine_parts.h"
#include "tests/support/store_rank.h"
#include "tests/support/subprocess.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::collector {
namespace {

TEST(AnalysisBudget, ASecondQueryPastTheBudgetIsRefusedTheOnlyOneNever) {
  AnalysisCache cache;
  AnalysisBudget budget(&cache);
  budget.set_budget(1000);
  AnalysisBudget::Lease first(&budget);
  ASSERT_TRUE(first.Add(600).ok());
  AnalysisBudget::Lease second(&budget);
  EXPECT_TRUE(second.Add(300).ok());
  const absl::Status refused = second.Add(200);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("--analysis-cache-mb"), std::string::npos) << refused;
  EXPECT_EQ(refused.message().find('\n'), std::string::npos);
  EXPECT_EQ(budget.in_flight_bytes(), 900u);  // the refused charge took nothing
  EXPECT_EQ(budget.refusals(), 1u);
  second.Release(300);
  // Alone, a query may go past the budget: a job larger than it is still reported.
  EXPECT_TRUE(first.Add(5'000).ok());
  EXPECT_EQ(budget.in_flight_bytes(), 5'600u);
  EXPECT_EQ(second.Add(1).code(), absl::StatusCode::kResourceExhausted);
}

TEST(AnalysisBudget, ALeaseGivesEverythingBackWhenItEnds) {
  AnalysisCache cache;
  AnalysisBudget budget(&cache);
  budget.set_budget(100);
  {
    AnalysisBudget::Lease lease(&budget);
    ASSERT_TRUE(lease.Add(70).ok());
    lease.Release(20);
    EXPECT_EQ(budget.in_flight_bytes(), 50u);
  }
  EXPECT_EQ(budget.in_flight_bytes(), 0u);
  AnalysisBudget unbounded_budget(&cache);  // 0 = unbounded
  AnalysisBudget::Lease a(&unbounded_budget), b(&unbounded_budget);
  EXPECT_TRUE(a.Add(1ull << 40).ok());
  EXPECT_TRUE(b.Add(1ull << 40).ok());
}

class AnalysisBudgetEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BatchIngestor ingestor(parts_.store.get(), parts_.dictionaries.get(), &parts_.counters,
                           analysis::StepSegmenter());
    synthetic::SyntheticOptions so;
    so.scenario = synthetic::Scenario::kSyncStall;
    so.steps = 20;
    so.job_id = "job";
    synthetic::SyntheticRank rank = synthetic::GenerateRank(so, 0);
    testing::StoreRank(ingestor, rank);
  }

  static v1::GetStepReportRequest All() {
    v1::GetStepReportRequest r;
    r.set_job_id("job");
    r.set_all(true);
    return r;
  }

  testing::TempDir dir_;
  testing::QueryEngineParts parts_{dir_.path()};
};

TEST_F(AnalysisBudgetEngineTest, ReportsAndSummariesAreRefusedWhileOtherQueriesHoldTheBudget) {
  auto engine = parts_.Engine();
  // What the job's analyses take: measured on an unbounded engine.
  ASSERT_TRUE(engine->GetStepReport(All()).ok());
  const uint64_t job_bytes = engine->cache_bytes();
  ASSERT_GT(job_bytes, 0u);
  EXPECT_EQ(engine->analysis_budget()->in_flight_bytes(), 0u) << "the query gave its memory back";

  auto bounded = parts_.Engine();
  bounded->set_cache_budget(4 * job_bytes);
  {
    // Other queries in progress hold the whole budget.
    AnalysisBudget::Lease others(bounded->analysis_budget());
    ASSERT_TRUE(others.Add(4 * job_bytes).ok());
    absl::StatusOr<v1::GetStepReportResponse> report = bounded->GetStepReport(All());
    EXPECT_EQ(report.status().code(), absl::StatusCode::kResourceExhausted) << report.status();
    v1::GetJobSummaryRequest s;
    s.set_job_id("job");
    EXPECT_EQ(bounded->GetJobSummary(s).status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(bounded->analysis_budget()->refusals(), 2u);
    EXPECT_EQ(bounded->GetStats().stats().analysis_queries_refused(), 2u);
    EXPECT_EQ(bounded->GetStats().stats().analysis_in_flight_bytes(), 4 * job_bytes);
  }
  // They finished: the same query is answered, and what it leaves cached fits the budget.
  absl::StatusOr<v1::GetStepReportResponse> report = bounded->GetStepReport(All());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->reports_size(), 20);
  EXPECT_LE(bounded->cache_bytes(), 4 * job_bytes);
  EXPECT_EQ(bounded->analysis_budget()->in_flight_bytes(), 0u);

  // Another query in progress holds 3.5 jobs' worth: a cached answer's copy (1 job) does not fit
  // beside it, and the cache (1 job) cannot make enough room: refused, not grown.
  AnalysisBudget::Lease others(bounded->analysis_budget());
  ASSERT_TRUE(others.Add(4 * job_bytes - job_bytes / 2).ok());
  EXPECT_EQ(bounded->GetStepReport(All()).status().code(), absl::StatusCode::kResourceExhausted);
  // Holding 2 jobs' worth, the copy fits once the cache makes room: cache + queries in progress
  // stay within the budget.
  others.Release(others.bytes() - 2 * job_bytes);
  ASSERT_TRUE(bounded->GetStepReport(All()).ok());
  EXPECT_LE(bounded->cache_bytes() + bounded->analysis_budget()->in_flight_bytes(),
            4 * job_bytes + job_bytes / 10);
}

}  // namespace
}  // namespace gpuspy::collector
