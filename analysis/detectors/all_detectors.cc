#include "analysis/detectors/detectors.h"

namespace gpuspy::analysis {

const std::vector<StepDetector>& AllStepDetectors() {
  static const std::vector<StepDetector> kAll = {
      &DetectSyncStall,  &DetectLaunchStorm, &DetectCopyDominated, &DetectInputStall,
      &DetectHostBound,  &DetectCudaApiBound,
      &DetectFp32Gemm,   &DetectAllocChurn,  &DetectUnfusedAttention, &DetectUnfusedElementwise,
      &DetectGpuBound,
  };
  return kAll;
}

}  // namespace gpuspy::analysis
