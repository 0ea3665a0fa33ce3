#include "analysis/in_memory_batches.h"

#include <utility>

namespace gpuspy::analysis {

ImportBatches ImportBatches::Cut(const EventColumns& events) {
  ImportBatches out;
  out.events_ = &events;
  out.parts_ = events.size() / kEventsPerImportBatch + 1;
  out.collectives_ = events.CollectivesByPart(out.parts_);
  EventColumns part;
  for (size_t c = 0; c < out.parts_; ++c) {
    part.ClearKeepingCapacity();
    events.AppendPart(c, out.parts_, out.collectives_[c], &part);
    // Split drops empty parts, but one part is the whole trace, empty or not.
    if (part.empty() && out.parts_ > 1) continue;
    out.part_.push_back(c);
    out.ranges_.push_back(part.TimeRange());
  }
  return out;
}

ImportBatches ImportBatches::Of(std::vector<EventColumns> batches) {
  ImportBatches out;
  for (const EventColumns& b : batches) out.ranges_.push_back(b.TimeRange());
  out.owned_ = std::move(batches);
  return out;
}

void ImportBatches::AppendTo(size_t i, EventColumns* out) const {
  if (events_ == nullptr) {
    out->Append(owned_[i]);
    return;
  }
  const size_t c = part_[i];
  events_->AppendPart(c, parts_, collectives_[c], out);
}

ImportBatches CutIntoImportBatches(const EventColumns& events) { return ImportBatches::Cut(events); }

absl::Status InMemoryBatches::ForEachBatch(Visit visit) {
  for (size_t i = 0; i < batches_.size(); ++i) {
    batch_.ClearKeepingCapacity();
    batches_.AppendTo(i, &batch_);
    visit(batch_, strings_);
  }
  return absl::OkStatus();
}

absl::Status InMemoryBatches::ForEachBatchIn(int64_t from_ns, int64_t to_ns, Visit visit) {
  for (size_t i = 0; i < batches_.size(); ++i) {
    if (!batches_.Overlaps(i, from_ns, to_ns)) continue;
    batch_.ClearKeepingCapacity();
    batches_.AppendTo(i, &batch_);
    visit(batch_, strings_);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> InMemoryBatches::WithWindow(int64_t from_ns, int64_t to_ns, Visit use) {
  window_.ClearKeepingCapacity();
  // Appended straight from the trace: visiting each batch first would copy it twice.
  for (size_t i = 0; i < batches_.size(); ++i) {
    if (batches_.Overlaps(i, from_ns, to_ns)) batches_.AppendTo(i, &window_);
  }
  use(window_, strings_);
  return std::string();
}

}  // namespace gpuspy::analysis
