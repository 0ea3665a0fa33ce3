// `gpuspy report` tells a run of steps with the same findings once: the runs are the analysis's
// (analysis/finding_runs.h), the line the CLI's (viewer/cli/finding_run_text.h).
#include "analysis/detector_names.h"
#include "analysis/finding_runs.h"

#include <gtest/gtest.h>

#include "viewer/cli/finding_run_text.h"

namespace gpuspy::analysis {
namespace {

v1::StepReport Step(uint64_t process, int64_t n, std::vector<std::string> detectors,
                    int64_t lost_ns, const std::string& site = "") {
  v1::StepReport r;
  r.mutable_step()->set_process_id(process);
  r.mutable_step()->set_number(n);
  for (const std::string& d : detectors) {
    auto* f = r.add_findings();
    f->set_detector(*analysis::ParseDetector(d));
    f->set_lost_ns(lost_ns);
    if (!site.empty()) {
      // The call site is structured; the text around it is for people and is not parsed.
      auto* e = f->add_evidence();
      e->set_key("sync_site");
      e->set_value(site + " x14 (9.5 ms)");
      e->set_call_site(site);
    }
  }
  return r;
}

std::vector<FindingRun> Runs(const std::vector<v1::StepReport>& reports) {
  std::vector<const v1::StepReport*> ordered;
  for (const auto& r : reports) ordered.push_back(&r);
  return FindingRuns(ordered);
}

TEST(FindingRuns, ConsecutiveStepsWithTheSameFindingsAreOneLine) {
  const auto runs = Runs({Step(1, 0, {"warmup"}, 0), Step(1, 1, {"sync_stall"}, 9'000'000, "train.py:57 f"),
                          Step(1, 2, {"sync_stall"}, 10'000'000, "train.py:57 f"),
                          Step(1, 3, {"sync_stall"}, 11'000'000, "train.py:57 f")});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].process_id, 1u);
  EXPECT_EQ(runs[0].median_lost_ns, 10'000'000);
  EXPECT_EQ(runs[0].call_site, "train.py:57 f");
  EXPECT_EQ(cli::Describe(runs[0], "0"),
            "rank 0 steps 1-3 (3 steps): sync_stall, 10.00 ms/step lost (median) at train.py:57 f");
}

TEST(FindingRuns, ADifferentFindingOrAnotherRankBreaksTheRun) {
  const auto runs = Runs({Step(1, 1, {"sync_stall"}, 1), Step(1, 2, {"sync_stall", "alloc_churn"}, 1),
                          Step(1, 3, {"sync_stall"}, 1), Step(2, 4, {"sync_stall"}, 1),
                          Step(2, 5, {}, 0), Step(2, 6, {}, 0)});
  EXPECT_TRUE(runs.empty());  // no two neighbours alike; healthy steps are not a run
}

}  // namespace
}  // namespace gpuspy::analysis
