// LoadOfflineJob (viewer/cli/offline_job.h): a job's ranks read one after another on one thread.
// With EventsAfterAnalysis::kDrop each rank's events go once its steps are analysed, and the next
// file fills the same columns: the steps, the process list and the job-level verdicts are those
// of a load that keeps every rank's events.
#include "viewer/cli/offline_job.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/support/subprocess.h"

namespace gpuspy::cli {
namespace {

// One rank of a 3-rank job: `steps` profiler steps of 10 ms, a GEMM and an all-reduce in each;
// rank 2's GEMM runs longer, so the others wait for it in the all-reduce.
std::string RankTrace(int rank, int steps) {
  std::string events;
  for (int s = 0; s < steps; ++s) {
    const int64_t t = 1000 + s * 10'000;
    const int64_t gemm = rank == 2 ? 6000 : 2000;
    const int corr = 100 + 2 * s;
    absl::StrAppend(
        &events, events.empty() ? "" : ",\n",
        R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)", s, R"(", "pid": 1, "tid": 1, "ts": )", t,
        R"(, "dur": 9900},)", "\n",
        R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )", t + 10,
        R"(, "dur": 5, "args": {"correlation": )", corr, "}},\n",
        R"({"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": )", t + 20,
        R"(, "dur": )", gemm, R"(, "args": {"device": 0, "stream": 7, "correlation": )", corr,
        R"(, "grid": [80, 1, 1], "block": [256, 1, 1]}},)", "\n",
        R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )", t + 30,
        R"(, "dur": 5, "args": {"correlation": )", corr + 1, "}},\n",
        R"({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 7, "ts": )",
        t + 20 + gemm, R"(, "dur": )", 6500 - gemm, R"(, "args": {"device": 0, "stream": 7, "correlation": )",
        corr + 1, R"(, "In msg nelems": 1048576, "dtype": "Float", "Collective name": "allreduce", "Group size": 3}})");
    if (s == 5) {
      // A kernel first seen after warm-up (a recompile): the step series compares kernel names
      // across steps, after every rank's steps are analysed.
      absl::StrAppend(&events, ",\n",
                      R"({"ph": "X", "cat": "kernel", "name": "triton_poi_fused_add_0", "pid": 0, "tid": 7, "ts": )",
                      t + 7000, R"(, "dur": 100, "args": {"device": 0, "stream": 7, "correlation": 99}})");
    }
  }
  return absl::StrCat(R"({"schemaVersion": 1, "distributedInfo": {"rank": )", rank,
                      R"(, "world_size": 3}, "traceEvents": [)", "\n", events, "\n]}\n");
}

std::vector<std::string> WriteJob(const std::string& dir) {
  std::vector<std::string> files;
  for (int rank = 0; rank < 3; ++rank) {
    files.push_back(dir + "/rank" + std::to_string(rank) + ".json");
    // Different lengths: each file reuses columns that held a different number of events.
    std::ofstream(files.back()) << RankTrace(rank, 8 + 3 * rank);
  }
  return files;
}

TEST(OfflineJob, DroppingEachRanksEventsAfterItsAnalysisChangesNoResult) {
  testing::TempDir dir;
  const std::vector<std::string> files = WriteJob(dir.path());
  const OfflineJob kept = LoadOfflineJob(files, "job", 1, false, analysis::kDefaultStepPattern, {},
                                         EventsAfterAnalysis::kKeep);
  const OfflineJob dropped = LoadOfflineJob(files, "job", 1, false, analysis::kDefaultStepPattern, {},
                                            EventsAfterAnalysis::kDrop);
  ASSERT_FALSE(kept.any_failed());
  ASSERT_FALSE(dropped.any_failed());
  ASSERT_EQ(kept.processes.size(), 3u);
  ASSERT_EQ(dropped.processes.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(files[i]);
    EXPECT_EQ(kept.processes[i].rank, dropped.processes[i].rank);
    EXPECT_EQ(kept.processes[i].event_count, dropped.processes[i].event_count);
    // Five trace events a step; the all-reduce kernel also gives a collective record; one more
    // kernel in step 5.
    EXPECT_EQ(kept.processes[i].event_count, 6u * (8 + 3 * i) + 1);
    EXPECT_EQ(kept.files[i].trace->events.size(), kept.processes[i].event_count);
    EXPECT_TRUE(dropped.files[i].trace->events.empty());
    EXPECT_GT(dropped.files[i].timings.event_bytes, 0u);
  }
  ASSERT_EQ(kept.steps.size(), dropped.steps.size());
  size_t stragglers = 0, new_kernels = 0;
  for (const auto& [process_id, steps] : kept.steps) {
    const std::vector<analysis::StepAnalysis>& other = dropped.steps.at(process_id);
    ASSERT_EQ(steps.size(), other.size());
    for (size_t s = 0; s < steps.size(); ++s) {
      EXPECT_EQ(steps[s].report.ShortDebugString(), other[s].report.ShortDebugString())
          << "process " << process_id << " step " << s;
      stragglers += steps[s].report.primary_bottleneck() == v1::straggler;
      for (const v1::Finding& f : steps[s].report.findings()) new_kernels += f.detector() == v1::new_kernels;
    }
  }
  // The job-level analysis ran on what was kept of each rank: rank 2 is the straggler, and the
  // kernel that appears after warm-up is seen.
  EXPECT_GT(stragglers, 0u);
  EXPECT_EQ(new_kernels, 3u);  // step 5 of each rank
}

}  // namespace
}  // namespace gpuspy::cli
