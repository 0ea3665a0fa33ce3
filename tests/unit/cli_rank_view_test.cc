// The CLI's cross-rank views, from hand-built analysis answers: the per-step rank lines and the
// ranks x steps matrix of `gpuspy report` (--ranks), a step's communication split and its most
// waited collectives, and --rank's rank -> process mapping.
#include <algorithm>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "analysis/detector_names.h"
#include "viewer/cli/comm_view.h"
#include "viewer/cli/rank_select.h"
#include "viewer/cli/rank_view.h"

namespace gpuspy::cli {
namespace {

constexpr int64_t kMs = 1'000'000;

struct Cell {
  int32_t rank;
  std::string verdict;
  int64_t wait_ms;
  int64_t exposed_ms;
  bool straggler;
};

void AddStep(v1::JobSummary& s, int64_t number, int32_t straggler, int32_t slowest,
             const std::vector<Cell>& cells) {
  v1::JobStep* step = s.add_steps();
  step->set_number(number);
  step->set_straggler_rank(straggler);
  step->set_slowest_rank(slowest);
  for (const Cell& c : cells) {
    v1::RankStepCell* cell = step->add_ranks();
    cell->set_rank(c.rank);
    cell->set_process_id(100 + c.rank);
    cell->set_primary_bottleneck(analysis::ParseDetector(c.verdict).value_or(v1::DETECTOR_UNSPECIFIED));
    cell->set_wait_ns(c.wait_ms * kMs);
    cell->set_exposed_comm_ns(c.exposed_ms * kMs);
    cell->set_straggler(c.straggler);
    step->set_max_wait_ns(std::max(step->max_wait_ns(), c.wait_ms * kMs));
  }
  // What the analysis sets (rank_matrix.cc): the least and the median wait over the ranks.
  std::vector<int64_t> waits;
  for (const Cell& c : cells) waits.push_back(c.wait_ms * kMs);
  std::sort(waits.begin(), waits.end());
  if (!waits.empty()) {
    step->set_min_wait_ns(waits.front());
    step->set_median_wait_ns(waits[waits.size() / 2]);
  }
}

// Four ranks, rank 2 the straggler in steps 7 and 9 (the analysis lists steps in any order).
v1::JobSummary FourRanks() {
  v1::JobSummary s;
  AddStep(s, 9, 2, 2, {{0, "straggler_wait", 8, 3, false}, {1, "straggler_wait", 7, 2, false},
                       {2, "gpu_bound", 0, 1, true}, {3, "straggler_wait", 9, 4, false}});
  AddStep(s, 7, 2, 2, {{0, "straggler_wait", 6, 1, false}, {1, "gpu_bound", 1, 0, false},
                       {2, "gpu_bound", 0, 0, true}, {3, "none", 5, 0, false}});
  AddStep(s, 8, -1, 0, {{0, "gpu_bound", 0, 0, false}, {1, "gpu_bound", 0, 0, false},
                        {2, "gpu_bound", 0, 0, false}});  // rank 3 lost this step
  return s;
}

StepPick All() {
  StepPick p;
  p.all = true;
  return p;
}

std::string Matrix(const v1::JobSummary& s, const StepPick& pick, int32_t rank = -1) {
  std::ostringstream out;
  PrintRankMatrix(PickSteps(s, pick), rank, out);
  return out.str();
}

std::string StepLines(const v1::JobSummary& s, int32_t rank = -1) {
  std::ostringstream out;
  PrintRankSteps(PickSteps(s, All()), rank, out);
  return out.str();
}

TEST(CliRankView, VerdictCodesAreShortAndDistinct) {
  EXPECT_EQ(VerdictCode(v1::straggler_wait), "SW");
  EXPECT_EQ(VerdictCode(v1::straggler), "ST");
  EXPECT_EQ(VerdictCode(v1::exposed_comm), "EC");
  EXPECT_EQ(VerdictCode(v1::comm_storm), "CS");
  EXPECT_EQ(VerdictCode(v1::gpu_bound), "GB");
  EXPECT_EQ(VerdictCode(v1::none), "--");
  EXPECT_EQ(VerdictCode(v1::DETECTOR_UNSPECIFIED), "--");
  EXPECT_EQ(VerdictCode(v1::host_bound), "host_bound");  // no code: spelled out, never guessed
}

TEST(CliRankView, PicksStepsInOrderLastKOrOne) {
  const v1::JobSummary s = FourRanks();
  auto numbers = [](const std::vector<const v1::JobStep*>& steps) {
    std::vector<int64_t> n;
    for (const auto* x : steps) n.push_back(x->number());
    return n;
  };
  EXPECT_EQ(numbers(PickSteps(s, All())), (std::vector<int64_t>{7, 8, 9}));
  StepPick last2;
  last2.last = 2;
  EXPECT_EQ(numbers(PickSteps(s, last2)), (std::vector<int64_t>{8, 9}));
  StepPick one;
  one.step = 8;
  EXPECT_EQ(numbers(PickSteps(s, one)), (std::vector<int64_t>{8}));
  one.step = 42;
  EXPECT_TRUE(PickSteps(s, one).empty());
}

TEST(CliRankView, MatrixMarksTheStragglerAndExplainsItsCodes) {
  EXPECT_EQ(Matrix(FourRanks(), All()),
            "RANK  7    8    9    STRAGGLER STEPS\n"
            "   0  SW   GB   SW                 0\n"
            "   1  GB   GB   SW                 0\n"
            "   2  GB*  GB   GB*                2\n"
            "   3  --        SW                 0\n"
            "legend: -- none, GB gpu_bound, SW straggler_wait, * straggler (the others waited for this "
            "rank)\n");
}

TEST(CliRankView, MatrixNarrowsToOneRankAndToTheLastSteps) {
  StepPick last1;
  last1.last = 1;
  EXPECT_EQ(Matrix(FourRanks(), last1, 2),
            "RANK  9    STRAGGLER STEPS\n"
            "   2  GB*                1\n"
            "legend: GB gpu_bound, * straggler (the others waited for this rank)\n");
}

TEST(CliRankView, StepLinesShowSlowestStragglerEachRanksWaitAndExposedComm) {
  EXPECT_EQ(StepLines(FourRanks()),
            "\nranks per step (ms; wait = time in collectives waiting for the last rank, "
            "straggler = the rank the others waited for):\n"
            "STEP  SLOWEST  STRAGGLER  WAIT r0  WAIT r1  WAIT r2  WAIT r3  MAX EXPOSED\n"
            "   7        2          2     6.00     1.00     0.00     5.00         1.00\n"
            "   8        0          -     0.00     0.00     0.00        -         0.00\n"
            "   9        2          2     8.00     7.00     0.00     9.00         4.00\n");
}

TEST(CliRankView, StepLinesForOneRankKeepOnlyItsWait) {
  const std::string text = StepLines(FourRanks(), 3);
  EXPECT_NE(text.find("STEP  SLOWEST  STRAGGLER  WAIT r3  MAX EXPOSED\n"), std::string::npos) << text;
  EXPECT_NE(text.find("   9        2          2     9.00         4.00\n"), std::string::npos) << text;
}

TEST(CliRankView, ManyRanksFoldIntoMinMedianMax) {
  v1::JobSummary s;
  std::vector<Cell> cells;
  for (int32_t r = 0; r < 16; ++r) cells.push_back({r, "straggler_wait", r, 0, false});
  AddStep(s, 1, 0, 0, cells);
  const std::string text = StepLines(s);
  EXPECT_NE(text.find("WAIT MIN/MEDIAN/MAX"), std::string::npos) << text;
  EXPECT_NE(text.find("0.00/8.00/15.00"), std::string::npos) << text;
  EXPECT_EQ(text.find("WAIT r15"), std::string::npos) << text;
}

TEST(CliRankView, OneRankHasNoCrossRankLines) {
  v1::JobSummary s;
  AddStep(s, 1, -1, -1, {{0, "gpu_bound", 0, 0, false}});
  EXPECT_EQ(StepLines(s), "");
  EXPECT_EQ(StepLines(v1::JobSummary()), "");
}

v1::CommSummary Comm() {
  v1::CommSummary c;
  c.set_rank(0);
  c.set_comm_ns(12'300'000);
  c.set_wait_ns(8'100'000);
  c.set_transfer_ns(4'200'000);
  c.set_exposed_ns(3'000'000);
  c.set_waited_for_rank(2);
  return c;
}

TEST(CliCommView, CommLineSplitsWaitAndTransferAndNamesTheRankWaitedFor) {
  v1::CommSummary c = Comm();
  EXPECT_EQ(CommLine(c), "comm 12.30 ms = wait 8.10 (for rank 2) + transfer 4.20; exposed 3.00 ms");
  c.set_waited_for_rank(-2);
  EXPECT_EQ(CommLine(c),
            "comm 12.30 ms = wait 8.10 (for a rank not captured) + transfer 4.20; exposed 3.00 ms");
  c.set_waited_for_rank(-1);
  c.set_bus_bandwidth_gbps(120.54);
  EXPECT_EQ(CommLine(c), "comm 12.30 ms = wait 8.10 + transfer 4.20; exposed 3.00 ms; busBw 120.5 GB/s");
}

TEST(CliCommView, ListsOnlyCollectivesWithAWaitAtMostThree) {
  v1::CommSummary c = Comm();
  auto add = [&](const std::string& op, const std::string& group, uint64_t index, int64_t wait,
                 int32_t last, uint64_t bytes, double gbps) {
    v1::CollectiveWait* w = c.add_collectives();
    w->set_op(op);
    w->set_group(group);
    w->set_index(index);
    w->set_duration_ns(5 * kMs);
    w->set_wait_ns(wait);
    w->set_last_rank(last);
    w->set_bytes(bytes);
    w->set_bus_bandwidth_gbps(gbps);
  };
  add("allreduce", "dp", 3, 4'100'000, 2, 64ull << 20, 120.5);
  add("", "", 0, 2 * kMs, -1, 0, 0);
  add("all_gather", "", 1, 1 * kMs, -2, 4096, 0);
  add("reduce_scatter", "", 2, 0, -1, 0, 0);  // no wait: nothing to show
  add("broadcast", "", 0, 1 * kMs, 1, 0, 0);  // fourth with a wait: over the limit
  EXPECT_EQ(WaitedCollectives(c),
            (std::vector<std::string>{
                "allreduce #3 (group dp): waited 4.10 of 5.00 ms for rank 2; 64.0 MiB at 120.5 GB/s",
                "collective #0: waited 2.00 of 5.00 ms",
                "all_gather #1: waited 1.00 of 5.00 ms for a rank not captured; 4.0 KiB"}));
  EXPECT_EQ(WaitedCollectives(c, 1).size(), 1u);
}

v1::ListJobsResponse Jobs() {
  v1::ListJobsResponse jobs;
  v1::JobInfo* j = jobs.add_jobs();
  j->set_job_id("ddp");
  for (int32_t rank : {0, 1, 2, 3, 5}) {
    v1::ProcessInfo* p = j->add_processes();
    p->set_process_id(10 + rank);
    p->mutable_identity()->set_rank(rank);
    p->set_last_seen_unix_ns(1000);
  }
  v1::ProcessInfo* restarted = j->add_processes();  // rank 1 again, later
  restarted->set_process_id(99);
  restarted->mutable_identity()->set_rank(1);
  restarted->set_last_seen_unix_ns(2000);
  v1::JobInfo* solo = jobs.add_jobs();
  solo->set_job_id("solo");
  solo->add_processes()->mutable_identity()->set_rank(-1);
  return jobs;
}

TEST(CliRankSelect, MapsARankToItsProcessTheLatestWhenItRanTwice) {
  EXPECT_EQ(*ProcessOfRank(Jobs(), "ddp", 2), 12u);
  EXPECT_EQ(*ProcessOfRank(Jobs(), "ddp", 1), 99u);
}

TEST(CliRankSelect, AnUnknownRankNamesTheRanksTheJobHas) {
  absl::StatusOr<uint64_t> p = ProcessOfRank(Jobs(), "ddp", 4);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(p.status().message(), "job 'ddp' has no rank 4 (its ranks: 0-3, 5)");
  EXPECT_EQ(ProcessOfRank(Jobs(), "solo", 0).status().message(),
            "job 'solo' has no rank 0: its processes reported no rank");
  EXPECT_EQ(ProcessOfRank(Jobs(), "nope", 0).status().message(), "no job 'nope'");
}

}  // namespace
}  // namespace gpuspy::cli
