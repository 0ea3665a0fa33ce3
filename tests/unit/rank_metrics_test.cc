// Per-rank /metrics series of multi-rank jobs, from hand-built job summaries: each rank's median
// wait in collectives and straggler steps, and the bound on rank labels.
#include "collector/metrics/rank_metrics.h"

#include <gtest/gtest.h>

namespace gpuspy::collector {
namespace {

v1::JobSummary Job(const std::string& id, int ranks) {
  v1::JobSummary s;
  s.set_job_id(id);
  for (int r = 0; r < ranks; ++r) {
    v1::RankSummary* rank = s.add_ranks();
    rank->set_rank(r);
    rank->set_median_wait_ns(r == 2 ? 0 : 25'000'000 + r);
    rank->set_straggler_steps(r == 2 ? 8 : 0);
  }
  return s;
}

std::string Text(const std::vector<v1::JobSummary>& jobs) {
  PrometheusText m;
  WriteRankMetrics(jobs, m);
  return m.text();
}

TEST(RankMetrics, EachRanksWaitAndStragglerStepsLabelledByJobAndRank) {
  const std::string text = Text({Job("ddp", 4)});
  for (const char* line : {"gpuspy_rank_comm_wait_seconds{gpuspy_job=\"ddp\",rank=\"0\"} 0.025\n",
                           "gpuspy_rank_comm_wait_seconds{gpuspy_job=\"ddp\",rank=\"2\"} 0\n",
                           "gpuspy_rank_comm_wait_seconds{gpuspy_job=\"ddp\",rank=\"3\"} 0.025000003\n",
                           "gpuspy_rank_straggler_steps{gpuspy_job=\"ddp\",rank=\"2\"} 8\n",
                           "gpuspy_rank_straggler_steps{gpuspy_job=\"ddp\",rank=\"1\"} 0\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

TEST(RankMetrics, FamiliesAreDeclaredWithoutJobs) {
  const std::string text = Text({});
  EXPECT_NE(text.find("# TYPE gpuspy_rank_comm_wait_seconds gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE gpuspy_rank_straggler_steps gauge\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpuspy_job="), std::string::npos) << text;
}

TEST(RankMetrics, ABigJobKeepsItsStragglerAndTheRanksThatWaitedLongest) {
  const std::string text = Text({Job("big", 200)});
  size_t series = 0;
  for (size_t at = text.find("gpuspy_rank_comm_wait_seconds{"); at != std::string::npos;
       at = text.find("gpuspy_rank_comm_wait_seconds{", at + 1)) {
    ++series;
  }
  EXPECT_EQ(series, kMaxRanksPerJob);
  EXPECT_NE(text.find("gpuspy_rank_straggler_steps{gpuspy_job=\"big\",rank=\"2\"} 8\n"), std::string::npos);
  EXPECT_NE(text.find("rank=\"199\""), std::string::npos) << "the longest wait is kept";
  EXPECT_EQ(text.find("rank=\"0\""), std::string::npos) << "the shortest wait is dropped";
}

}  // namespace
}  // namespace gpuspy::collector
