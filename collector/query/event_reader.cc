#include "collector/query/event_reader.h"

#include <mutex>
#include <shared_mutex>

#include "codec/batch_decoder.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

// Stored batches read at a time by ForEachBatch.
constexpr size_t kBatchesPerPage = 256;

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
  absl::StatusOr<std::shared_ptr<DictionaryCache::Entry>> entry = dictionaries_->Get(process_id);
  if (!entry.ok()) return entry.status();
  uint64_t undecodable = 0;
  uint64_t after = 0;
  v1::EventBatch batch;
  EventColumns events;
  for (;;) {
    absl::StatusOr<std::vector<StoredBatch>> page =
        store_->ReadBatchesAfter(process_id, after, kBatchesPerPage);
    if (!page.ok()) return page.status();
    if (page->empty()) return undecodable;
    std::shared_lock lock((*entry)->mu);
    for (const StoredBatch& stored : *page) {
      after = stored.sequence;
      events.clear();
      if (!DecodeStored(process_id, stored, (*entry)->dict, &batch, &events)) {
        ++undecodable;
        continue;
      }
      visit(events, (*entry)->dict.strings());
    }
  }
}

}  // namespace gpuspy::collector
