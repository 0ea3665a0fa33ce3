// One cost, one finding. Two detectors can name the same lost time from two angles; the user acts
// on the largest expected gain, so the time is counted once, with the detector whose fix removes
// it, and the other angle becomes evidence.
//
//   alloc_churn / cuda_api_bound: GPU idle inside cudaMalloc/cudaFree is both allocator churn and
//   driver work (allocation reaches the driver). It stays with alloc_churn, whose fix (let the
//   caching allocator reuse memory) removes it; cuda_api_bound keeps the rest of its time, and
//   goes when the rest is below its own bar.
//
//   straggler / input_stall: a rank late for the others because its input pipeline is slow
//   (straggler's cause "input") has one cost, its input stall, seen by the whole job. It is the
//   straggler finding, with the larger of the two figures; the input stall's evidence moves to
//   it.
#include <algorithm>

#include "analysis/detectors/detectors.h"
#include "analysis/evidence.h"
#include "analysis/job_findings.h"

namespace gpuspy::analysis {
namespace {

v1::Finding* Find(std::vector<v1::Finding>* findings, const char* detector) {
  auto it = std::find_if(findings->begin(), findings->end(),
                         [&](const v1::Finding& f) { return f.detector() == detector; });
  return it == findings->end() ? nullptr : &*it;
}

}  // namespace

void MergeOverlappingFindings(const StepContext& ctx, std::vector<v1::Finding>* findings) {
  v1::Finding* churn = Find(findings, "alloc_churn");
  v1::Finding* driver = Find(findings, "cuda_api_bound");
  if (churn == nullptr || driver == nullptr) return;
  const int64_t all = driver->lost_ns();
  const int64_t rest = std::max<int64_t>(0, all - churn->lost_ns());
  AddEvidence(churn, "in_cuda_calls", Ns(all),
              " of GPU idle inside CUDA calls in all, this included (cuda_api_bound)");
  if (ctx.ShareOfWall(rest) >= kMinCudaCallShare) {
    driver->set_lost_ns(rest);
    AddEvidence(driver, "of_which_allocation", Ns(all - rest),
                " counted under alloc_churn");
    return;
  }
  findings->erase(findings->begin() + (driver - findings->data()));
}

void MergeStragglerCause(std::vector<v1::Finding>* findings) {
  v1::Finding* straggler = Find(findings, "straggler");
  v1::Finding* input = Find(findings, "input_stall");
  if (straggler == nullptr || input == nullptr) return;
  const bool input_cause = std::any_of(straggler->evidence().begin(), straggler->evidence().end(),
                                       [](const v1::Evidence& e) { return e.key() == "cause" && e.value() == "input"; });
  if (!input_cause) return;
  straggler->set_lost_ns(std::max(straggler->lost_ns(), input->lost_ns()));
  if (SeverityRank(input->severity()) > SeverityRank(straggler->severity())) straggler->set_severity(input->severity());
  AddEvidence(straggler, "input_stall", input->title());
  for (const v1::Evidence& e : input->evidence()) *straggler->add_evidence() = e;
  findings->erase(findings->begin() + (input - findings->data()));
}

}  // namespace gpuspy::analysis
