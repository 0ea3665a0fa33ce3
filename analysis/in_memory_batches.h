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

// A trace's events cut into the batches `gpuspy import` stores them in, each with its time range.
// The batches are parts of the trace's own columns (EventColumns::AppendPart), appended where a
// read wants them: copying every event into batches held beside the trace was ~4% of an offline
// analysis, in page faults mostly, and as much memory again as the events.
class ImportBatches {
 public:
  ImportBatches() = default;
  // Cuts `events` (which must outlive the batches) as `gpuspy import` would: Split into
  // events / kEventsPerImportBatch + 1 parts.
  static ImportBatches Cut(const EventColumns& events);
  static ImportBatches Cut(const EventColumns&& events) = delete;  // would outlive its events
  // These batches as they are (tests: a synthetic job's steps, one batch each).
  static ImportBatches Of(std::vector<EventColumns> batches);

  size_t size() const { return ranges_.size(); }
  // [min start, max end] of batch i.
  std::pair<int64_t, int64_t> range(size_t i) const { return ranges_[i]; }
  // Whether batch i is one a read of [from_ns, to_ns) takes: the storage index's rule
  // (Store::ReadBatches), so that offline and stored analyses see the same batches.
  bool Overlaps(size_t i, int64_t from_ns, int64_t to_ns) const {
    return ranges_[i].second >= from_ns && ranges_[i].first < to_ns;
  }
  // Appends batch i's events to `out`: what Split's part holds, in its order.
  void AppendTo(size_t i, EventColumns* out) const;

 private:
  const EventColumns* events_ = nullptr;   // Cut: the trace's events
  size_t parts_ = 0;                       // Cut: the parts they were cut into
  std::vector<size_t> part_;               // Cut: batch i is part part_[i] (empty parts are none)
  std::vector<std::vector<uint32_t>> collectives_;  // Cut: each part's collectives
  std::vector<EventColumns> owned_;        // Of
  std::vector<std::pair<int64_t, int64_t>> ranges_;
};
ImportBatches CutIntoImportBatches(const EventColumns& events);
ImportBatches CutIntoImportBatches(const EventColumns&& events) = delete;

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
  EventColumns batch_;   // the batch a visit sees, reused from batch to batch
};

}  // namespace gpuspy::analysis
