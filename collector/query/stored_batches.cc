#include "collector/query/stored_batches.h"

#include <mutex>
#include <shared_mutex>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpuspy::collector {

analysis::StepWindow ToStepWindow(const StepRecord& s) {
  return {s.number, s.start_ns, s.end_ns, s.source};
}

StepRecord ToStepRecord(uint64_t process_id, const analysis::StepWindow& w) {
  return {process_id, w.number, w.start_ns, w.end_ns, w.source};
}

absl::StatusOr<std::optional<std::vector<analysis::StepWindow>>> StoredBatches::IndexedNvtxSteps() {
  absl::StatusOr<std::vector<StepRecord>> stored = store_->ListSteps(process_.process_id);
  if (!stored.ok()) return stored.status();
  std::vector<analysis::StepWindow> steps;
  steps.reserve(stored->size());
  for (const StepRecord& s : *stored) steps.push_back(ToStepWindow(s));
  return steps;
}

std::optional<std::vector<analysis::StepWindow>> StoredBatches::RememberedDetection() {
  if (options_.cache == nullptr) return std::nullopt;
  std::optional<std::vector<StepRecord>> kept = options_.cache->FindDetectedSteps(process_);
  if (!kept.has_value()) return std::nullopt;
  std::vector<analysis::StepWindow> steps;
  steps.reserve(kept->size());
  for (const StepRecord& s : *kept) steps.push_back(ToStepWindow(s));
  return steps;
}

void StoredBatches::RememberDetection(const std::vector<analysis::StepWindow>& steps) {
  if (options_.cache == nullptr) return;
  std::vector<StepRecord> records;
  records.reserve(steps.size());
  for (const analysis::StepWindow& w : steps) records.push_back(ToStepRecord(process_.process_id, w));
  options_.cache->PutDetectedSteps(process_, std::move(records));
}

absl::Status StoredBatches::ForEachBatch(Visit visit) {
  auto stopped = [this] { return options_.cancelled != nullptr && options_.cancelled->load(); };
  absl::StatusOr<uint64_t> read = reader_->ForEachBatch(
      process_.process_id, [&](const EventColumns& events, const StringTable& strings) {
        if (!stopped()) visit(events, strings);
      });
  if (!read.ok()) return read.status();
  if (stopped()) return absl::CancelledError("gpuspyd is shutting down");
  return absl::OkStatus();
}

absl::Status StoredBatches::ForEachBatchIn(int64_t from_ns, int64_t to_ns, Visit visit) {
  absl::StatusOr<uint64_t> read = reader_->ForEachBatchIn(
      process_.process_id, from_ns, to_ns,
      [&](const EventColumns& events, const StringTable& strings) { visit(events, strings); });
  return read.status();
}

absl::StatusOr<std::string> StoredBatches::WithWindow(int64_t from_ns, int64_t to_ns, Visit use) {
  absl::StatusOr<WindowEvents> window = reader_->Read(process_.process_id, from_ns, to_ns);
  if (!window.ok()) return window.status();
  // The step's events, while it is analysed: a large step (100k events) is tens of MB.
  const uint64_t window_bytes = window->events.size() * kWindowBytesPerEvent;
  if (options_.lease != nullptr) {
    if (absl::Status st = options_.lease->Add(window_bytes); !st.ok()) return st;
  }
  {
    std::shared_lock lock(window->dictionary->mu);
    use(window->events, window->dictionary->dict.strings());
  }
  if (options_.lease != nullptr) options_.lease->Release(window_bytes);
  if (window->undecodable_batches == 0) return std::string();
  return absl::StrCat(window->undecodable_batches,
                      " stored batches of this window are damaged and were skipped");
}

}  // namespace gpuspy::collector
