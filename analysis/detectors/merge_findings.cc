// One cost, one finding. Two detectors can name the same lost time from two angles; the user acts
// on the largest expected gain, so the time is counted once, with the detector whose fix removes
// it, and the other angle becomes evidence.
//
//   alloc_churn / cuda_api_bound: GPU idle inside cudaMalloc/cudaFree is both allocator churn and
//   driver work (allocation reaches the driver). It stays with alloc_churn, whose fix (let the
//   caching allocator reuse memory) removes it; cuda_api_bound keeps the rest of its time, and
//   goes when the rest is below its own bar.
//
//   straggler / input_stall, sync_stall: a rank late for the others because its input pipeline
//   is slow (straggler's cause "input"), or because its host blocks in synchronizations (cause
//   "sync"), has one cost, that stall, seen by the whole job. It is the straggler finding, with
//   the larger of the two figures; the stall's evidence moves to it.
//
//   straggler_wait / the rank's own findings: a rank that waited in collectives for a late rank
//   gains nothing from its own fixes until they outrun that wait: the collective ends when the
//   late rank arrives, so the first part of any speed-up before it becomes more waiting. The
//   replay (analysis/replay/) sees one rank and cannot know that; after the cross-rank pass each
//   of the rank's own gains is what is left beyond its exposed wait.
#include <algorithm>
#include <string>

#include "analysis/detector_names.h"
#include "analysis/detectors/detectors.h"
#include "analysis/evidence.h"
#include "analysis/job_findings.h"

namespace gpuspy::analysis {
namespace {

v1::Finding* Find(std::vector<v1::Finding>* findings, v1::Detector detector) {
  auto it = std::find_if(findings->begin(), findings->end(),
                         [&](const v1::Finding& f) { return f.detector() == detector; });
  return it == findings->end() ? nullptr : &*it;
}

}  // namespace

void MergeOverlappingFindings(const StepContext& ctx, std::vector<v1::Finding>* findings) {
  v1::Finding* churn = Find(findings, v1::alloc_churn);
  v1::Finding* driver = Find(findings, v1::cuda_api_bound);
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
  v1::Finding* straggler = Find(findings, v1::straggler);
  if (straggler == nullptr) return;
  std::string cause;
  for (const v1::Evidence& e : straggler->evidence()) {
    if (e.key() == "cause") cause = e.value();
  }
  if (cause != "input" && cause != "sync") return;
  const v1::Detector stall_detector = cause == "input" ? v1::input_stall : v1::sync_stall;
  v1::Finding* stall = Find(findings, stall_detector);
  if (stall == nullptr) return;
  if (stall->lost_ns() > straggler->lost_ns()) {
    straggler->set_lost_ns(stall->lost_ns());
    if (stall->has_what_if()) *straggler->mutable_what_if() = stall->what_if();
  }
  straggler->set_severity(std::max(straggler->severity(), stall->severity()));  // the worse
  AddEvidence(straggler, DetectorName(stall_detector), stall->title());
  for (const v1::Evidence& e : stall->evidence()) *straggler->add_evidence() = e;
  findings->erase(findings->begin() + (stall - findings->data()));
}

}  // namespace gpuspy::analysis
