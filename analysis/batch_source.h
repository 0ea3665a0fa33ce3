// Where one process's events come from when its steps are found and analysed: the batches
// gpuspyd stored (collector/query/stored_batches.h) or a trace file held in memory, cut the way
// `gpuspy import` cuts it (in_memory_batches.h). AnalyzeProcess (process_analysis.h) reads both
// through this, so a trace analysed offline and the same trace imported and queried give the same
// steps and the same numbers: the batches are the same, and so is every rule applied to them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "analysis/step_segmenter.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

class BatchSource {
 public:
  // One decoded batch and the strings its refs resolve against (valid during the call only).
  using Visit = absl::FunctionRef<void(const EventColumns& events, const StringTable& strings)>;

  virtual ~BatchSource() = default;

  // The NVTX steps indexed as the batches arrived (NvtxStepsOfBatch, step_finder.h: gpuspyd's
  // ingest), possibly none; nullopt when this source keeps no index, and FindSteps reads every
  // batch for them instead.
  virtual absl::StatusOr<std::optional<std::vector<StepWindow>>> IndexedNvtxSteps() = 0;

  // Steps detected (period, windows) from these same batches by an earlier FindSteps and kept by
  // the source (detection reads every batch: gpuspyd keeps what it found until new batches
  // arrive); nullopt when none are kept.
  virtual std::optional<std::vector<StepWindow>> RememberedDetection() { return std::nullopt; }
  virtual void RememberDetection(const std::vector<StepWindow>&) {}

  // Every batch, one at a time, in the order they were stored.
  virtual absl::Status ForEachBatch(Visit visit) = 0;

  // The batches overlapping [from_ns, to_ns) (a batch's latest end >= from_ns and its earliest
  // start < to_ns: the storage index's rule), one at a time, in stored order.
  virtual absl::Status ForEachBatchIn(int64_t from_ns, int64_t to_ns, Visit visit) = 0;

  // Calls `use` once with the events of every batch overlapping [from_ns, to_ns), appended in
  // stored order (events outside the window included: the analysis clips). Returns what of that
  // window could not be read, in one line ("" when all of it could).
  virtual absl::StatusOr<std::string> WithWindow(int64_t from_ns, int64_t to_ns, Visit use) = 0;
};

}  // namespace gpuspy::analysis
