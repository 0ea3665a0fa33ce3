#include "analysis/detectors/comm_context.h"

namespace gpuspy::analysis {

const std::vector<CommDetector>& AllCommDetectors() {
  // straggler first: on the late rank it names the cause the others' waits come from.
  static const std::vector<CommDetector> kAll = {
      &DetectStraggler, &DetectStragglerWait, &DetectCommStorm, &DetectExposedComm};
  return kAll;
}

}  // namespace gpuspy::analysis
