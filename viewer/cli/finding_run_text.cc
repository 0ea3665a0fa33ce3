#include "viewer/cli/finding_run_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "viewer/cli/format.h"

namespace gpuspy::cli {

std::string Describe(const analysis::FindingRun& run, const std::string& rank) {
  std::string out = absl::StrCat("rank ", rank, " ", run.noun, "s ", run.first_step, "-",
                                 run.last_step, " (", run.steps, " ", run.noun, "s): ",
                                 absl::StrJoin(run.detectors, ", "));
  if (run.median_lost_ns > 0) {
    absl::StrAppend(&out, ", ", Ms(run.median_lost_ns), " ms/", run.noun, " lost (median)");
  }
  if (!run.call_site.empty()) absl::StrAppend(&out, " at ", run.call_site);
  return out;
}

}  // namespace gpuspy::cli
