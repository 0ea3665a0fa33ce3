#include "analysis/in_memory_batches.h"

namespace gpuspy::analysis {

ImportBatches CutIntoImportBatches(const EventColumns& events) {
  ImportBatches out;
  out.batches = events.Split(events.size() / kEventsPerImportBatch + 1);
  for (const EventColumns& b : out.batches) out.ranges.push_back(b.TimeRange());
  return out;
}

absl::Status InMemoryBatches::ForEachBatch(Visit visit) {
  for (const EventColumns& b : batches_.batches) visit(b, strings_);
  return absl::OkStatus();
}

absl::Status InMemoryBatches::ForEachBatchIn(int64_t from_ns, int64_t to_ns, Visit visit) {
  for (size_t i = 0; i < batches_.batches.size(); ++i) {
    const auto& [min_ns, max_ns] = batches_.ranges[i];
    if (max_ns >= from_ns && min_ns < to_ns) visit(batches_.batches[i], strings_);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> InMemoryBatches::WithWindow(int64_t from_ns, int64_t to_ns, Visit use) {
  window_.clear();
  absl::Status st = ForEachBatchIn(from_ns, to_ns, [&](const EventColumns& b, const StringTable&) {
    window_.Append(b);
  });
  if (!st.ok()) return st;
  use(window_, strings_);
  return std::string();
}

}  // namespace gpuspy::analysis
