// The CLI's text form of a diff: a fixed finding is one line with its predicted and realised
// gains as changes of the step time, and a diff with none prints no such section.
#include "viewer/cli/diff_view.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gpuspy::cli {
namespace {

v1::RunDiff TwoFixes() {
  v1::RunDiff d;
  for (auto [det, predicted] : {std::pair{v1::sync_stall, 8'100'000}, std::pair{v1::input_stall, 2'000'000}}) {
    v1::RealisedGain* g = d.add_realised();
    g->set_detector(det);
    g->set_predicted_gain_ns(predicted);
    g->set_predicted_by_replay(true);
    g->set_realised_gain_ns(7'600'000);
    g->set_realised_fraction(7.6 / (predicted / 1e6));
    g->set_new_primary(v1::gpu_bound);
  }
  d.mutable_realised(1)->set_still_present_share(0.2);
  d.mutable_realised(1)->set_b_median_lost_ns(900'000);
  v1::RealisedTogether* t = d.mutable_realised_together();
  t->set_fixes(2);
  t->set_predicted_gain_ns(9'500'000);
  t->set_predicted_basis("all_fixes_replay");
  t->set_realised_gain_ns(7'600'000);
  t->set_realised_fraction(0.8);
  return d;
}

TEST(CliDiffView, AFixedFindingIsOneLineWithPredictedAndRealisedGains) {
  std::ostringstream out;
  PrintDiff(TwoFixes(), out);
  const std::string text = out.str();
  EXPECT_NE(text.find("\n  sync_stall: predicted -8.10 ms, realised -7.60 ms (94%)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  input_stall: predicted -2.00 ms, realised -7.60 ms (380%); still in 20% of "
                      "B's steps, 0.9 ms each\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  2 fixes together: predicted -9.50 ms (A's all-fixes replay), realised -7.60 ms (80%)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  B's primary now: gpu_bound\n"), std::string::npos) << text;
}

TEST(CliDiffView, ADiffWithoutFixesPrintsNoFixedSection) {
  v1::RunDiff d = TwoFixes();
  d.clear_realised();
  d.clear_realised_together();
  std::ostringstream out;
  PrintDiff(d, out);
  EXPECT_EQ(out.str().find("FIXED SINCE A"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("predicted"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace gpuspy::cli
