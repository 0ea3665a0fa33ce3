// One process's events held in memory (a trace file read by `gpuspy analyze` / `gpuspy diff`) as
// a BatchSource: cut into the batches `gpuspy import` would store them in, so the offline report
// is the report gpuspyd gives for the same trace once imported (steps are found per batch, and a
// step is analysed over the batches that overlap it, as storage hands them out).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/batch_source.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// Events per batch of an imported trace (gpuspy import cuts traces into batches of this size).
inline constexpr size_t kEventsPerImportBatch = 4096;

// A trace's events cut into import batches, each with its time range.
struct ImportBatches {
  std::vector<EventColumns> batches;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // [min start, max end] of each batch
};
ImportBatches CutIntoImportBatches(const EventColumns& events);

class InMemoryBatches : public BatchSource {
 public:
  // Both must outlive this.
  InMemoryBatches(const ImportBatches& batches, const StringTable& strings)
      : batches_(batches), strings_(strings) {}

  // Nothing indexed them: FindSteps reads the batches.
  absl::StatusOr<std::optional<std::vector<StepWindow>>> IndexedNvtxSteps() override {
    return std::nullopt;
  }
  absl::Status ForEachBatch(Visit visit) override;
  absl::Status ForEachBatchIn(int64_t from_ns, int64_t to_ns, Visit visit) override;
  // Nothing is ever unreadable: "".
  absl::StatusOr<std::string> WithWindow(int64_t from_ns, int64_t to_ns, Visit use) override;

 private:
  const ImportBatches& batches_;
  const StringTable& strings_;
  EventColumns window_;  // reused from step to step: a step's events are appended again each time
};

}  // namespace gpuspy::analysis
