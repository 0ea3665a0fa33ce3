#include "collector/query/event_reader.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <shared_mutex>

#include "codec/batch_decoder.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

// Stored batches read at a time by ForEachBatch.
constexpr size_t kBatchesPerPage = 256;

// Stored batches read at a time by ForEachBatchFrom: a page of events usually ends within a few
// batches, and each read costs its payloads' memory.
constexpr size_t kBatchesPerRead = 16;

// Appends `stored`'s events to `out`; false (logged) when it does not decode. Ingest validated
// it, so that is storage damage: the caller skips the batch and keeps the rest readable.
bool DecodeStored(uint64_t process_id, const StoredBatch& stored, const ProcessDictionary& dict,
                  v1::EventBatch* scratch, EventColumns* out) {
  const absl::Status st = scratch->ParseFromString(stored.payload)
                              ? DecodeBatch(*scratch, dict, out)
                              : absl::DataLossError("stored payload does not parse");
  if (st.ok()) return true;
  spdlog::error("process {} batch {}: stored batch unreadable: {}", process_id, stored.sequence,
                st.ToString());
  return false;
}

}  // namespace

absl::StatusOr<WindowEvents> EventReader::Read(uint64_t process_id, int64_t from_ns,
                                               int64_t to_ns) {
  WindowEvents out;
  absl::StatusOr<std::shared_ptr<DictionaryCache::Entry>> entry = dictionaries_->Get(process_id);
  if (!entry.ok()) return entry.status();
  out.dictionary = *entry;
  absl::StatusOr<std::vector<StoredBatch>> batches =
      store_->ReadBatches(process_id, from_ns, to_ns);
  if (!batches.ok()) return batches.status();
  std::shared_lock lock(out.dictionary->mu);
  v1::EventBatch batch;
  for (const StoredBatch& stored : *batches) {
    if (!DecodeStored(process_id, stored, out.dictionary->dict, &batch, &out.events)) {
      ++out.undecodable_batches;
    }
  }
  return out;
}

absl::StatusOr<uint64_t> EventReader::ForEachBatchIn(
    uint64_t process_id, int64_t from_ns, int64_t to_ns,
    const std::function<void(const EventColumns&, const StringTable&)>& visit) {
  absl::StatusOr<std::shared_ptr<DictionaryCache::Entry>> entry = dictionaries_->Get(process_id);
  if (!entry.ok()) return entry.status();
  absl::StatusOr<std::vector<StoredBatch>> batches = store_->ReadBatches(process_id, from_ns, to_ns);
  if (!batches.ok()) return batches.status();
  uint64_t undecodable = 0;
  std::shared_lock lock((*entry)->mu);
  v1::EventBatch batch;
  EventColumns events;
  for (const StoredBatch& stored : *batches) {
    events.clear();
    if (!DecodeStored(process_id, stored, (*entry)->dict, &batch, &events)) {
      ++undecodable;
      continue;
    }
    visit(events, (*entry)->dict.strings());
  }
  return undecodable;
}

absl::StatusOr<uint64_t> EventReader::ForEachBatch(
    uint64_t process_id,
    const std::function<void(const EventColumns&, const StringTable&)>& visit) {
  return Walk(process_id, 0, 0, 0,
              [&](uint64_t, const EventColumns& events, const StringTable& strings) {
                visit(events, strings);
                return true;
              },
              kBatchesPerPage);
}

absl::StatusOr<uint64_t> EventReader::ForEachBatchFrom(
    uint64_t process_id, int64_t from_ns, int64_t to_ns, uint64_t first_sequence,
    const std::function<bool(uint64_t, const EventColumns&, const StringTable&)>& visit) {
  return Walk(process_id, from_ns, to_ns, first_sequence, visit, kBatchesPerRead);
}

absl::StatusOr<uint64_t> EventReader::Walk(
    uint64_t process_id, int64_t from_ns, int64_t to_ns, uint64_t first_sequence,
    const std::function<bool(uint64_t, const EventColumns&, const StringTable&)>& visit,
    size_t batches_per_read) {
  absl::StatusOr<std::shared_ptr<DictionaryCache::Entry>> entry = dictionaries_->Get(process_id);
  if (!entry.ok()) return entry.status();
  const bool windowed = from_ns != 0 || to_ns != 0;
  auto overlaps = [&](int64_t min_ns, int64_t max_ns) {
    return !windowed || (max_ns >= from_ns && min_ns < to_ns);  // as Store::ReadBatches
  };
  // A window: the index says which sequences overlap it, so the walk reads no payload before the
  // first of them or after the last (a step of a long run would otherwise read the whole run).
  uint64_t last_sequence = std::numeric_limits<uint64_t>::max();
  if (windowed) {
    absl::StatusOr<std::vector<BatchMark>> marks = store_->ListBatchMarks(process_id);
    if (!marks.ok()) return marks.status();
    uint64_t first = std::numeric_limits<uint64_t>::max();
    last_sequence = 0;
    for (const BatchMark& m : *marks) {
      if (!overlaps(m.min_ns, m.max_ns)) continue;
      first = std::min(first, m.sequence);
      last_sequence = std::max(last_sequence, m.sequence);
    }
    if (first == std::numeric_limits<uint64_t>::max()) return 0;
    first_sequence = std::max(first_sequence, first);
  }
  uint64_t undecodable = 0;
  uint64_t after = first_sequence == 0 ? 0 : first_sequence - 1;
  v1::EventBatch batch;
  EventColumns events;
  for (;;) {
    absl::StatusOr<std::vector<StoredBatch>> page =
        store_->ReadBatchesAfter(process_id, after, batches_per_read);
    if (!page.ok()) return page.status();
    if (page->empty()) return undecodable;
    std::shared_lock lock((*entry)->mu);
    for (const StoredBatch& stored : *page) {
      after = stored.sequence;
      if (stored.sequence > last_sequence) return undecodable;
      if (!overlaps(stored.min_ns, stored.max_ns)) continue;
      events.clear();
      if (!DecodeStored(process_id, stored, (*entry)->dict, &batch, &events)) {
        ++undecodable;
        continue;
      }
      if (!visit(stored.sequence, events, (*entry)->dict.strings())) return undecodable;
    }
  }
}

absl::StatusOr<std::optional<int64_t>> EventReader::EarliestNs(uint64_t process_id,
                                                              int64_t from_ns, int64_t to_ns) {
  absl::StatusOr<std::vector<BatchMark>> marks = store_->ListBatchMarks(process_id);
  if (!marks.ok()) return marks.status();
  const bool windowed = from_ns != 0 || to_ns != 0;
  std::optional<int64_t> out;
  for (const BatchMark& m : *marks) {
    if (m.min_ns == 0 && m.max_ns == 0) continue;  // no timed event (EventColumns::TimeRange)
    if (windowed && !(m.max_ns >= from_ns && m.min_ns < to_ns)) continue;
    out = std::min(out.value_or(m.min_ns), m.min_ns);
  }
  return out;
}

}  // namespace gpuspy::collector
