// Reads a process's stored batches for a time window and decodes them into model events.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/storage/dictionary_cache.h"
#include "collector/storage/store.h"
#include "model/events.h"

namespace gpuspy::collector {

struct WindowEvents {
  EventColumns events;
  // Resolves the events' string refs. Hold `dictionary->mu` shared while reading its strings.
  std::shared_ptr<DictionaryCache::Entry> dictionary;
  uint64_t undecodable_batches = 0;  // stored batches that failed to decode (counted, skipped)
};

// What GetEvents answers, column-wise (QueryEngine::ReadEvents).
struct ProcessWindowEvents {
  uint64_t process_id = 0;
  WindowEvents window;  // only the selected events, each kind in time order
};
struct SelectedEvents {
  std::vector<ProcessWindowEvents> processes;
  bool truncated = false;  // the request's limit cut the answer short
};

class EventReader {
 public:
  EventReader(Store* store, DictionaryCache* dictionaries)
      : store_(store), dictionaries_(dictionaries) {}

  // Events of every batch overlapping [from_ns, to_ns) (0, 0 = all). Events of those batches
  // outside the window are kept: callers clip to what they need.
  absl::StatusOr<WindowEvents> Read(uint64_t process_id, int64_t from_ns, int64_t to_ns);

  // The batches Read(process_id, from_ns, to_ns) would decode, one at a time and handed to
  // `visit` as ForEachBatch does: for long stretches (a process's start-up) of which the caller
  // keeps a summary only. Returns how many batches could not be decoded (counted, skipped).
  absl::StatusOr<uint64_t> ForEachBatchIn(
      uint64_t process_id, int64_t from_ns, int64_t to_ns,
      const std::function<void(const EventColumns& events, const StringTable& strings)>& visit);

  // Every stored batch of the process, in sequence order, decoded one at a time and handed to
  // `visit` with the strings its refs resolve against (the dictionary is held shared meanwhile).
  // Memory: one page of stored payloads and one decoded batch, whatever the process's size.
  // Returns how many batches could not be decoded (counted, skipped).
  absl::StatusOr<uint64_t> ForEachBatch(
      uint64_t process_id,
      const std::function<void(const EventColumns& events, const StringTable& strings)>& visit);

  // The batches overlapping [from_ns, to_ns) (0, 0 = all) from sequence `first_sequence` on, in
  // sequence order, decoded one at a time as ForEachBatch does; `visit` gets each batch's
  // sequence too and returns false to stop. For paging (event_pages.h): memory is a few stored
  // payloads and one decoded batch wherever the walk starts and however far it goes.
  absl::StatusOr<uint64_t> ForEachBatchFrom(
      uint64_t process_id, int64_t from_ns, int64_t to_ns, uint64_t first_sequence,
      const std::function<bool(uint64_t sequence, const EventColumns& events,
                               const StringTable& strings)>& visit);

  // The earliest start among the stored batches overlapping [from_ns, to_ns) (0, 0 = all), from
  // the index (no payload read): at most the start of every timed event they hold. nullopt when
  // none holds a timed event.
  absl::StatusOr<std::optional<int64_t>> EarliestNs(uint64_t process_id, int64_t from_ns,
                                                    int64_t to_ns);

 private:
  // ForEachBatchFrom reading `batches_per_read` stored payloads at a time.
  absl::StatusOr<uint64_t> Walk(
      uint64_t process_id, int64_t from_ns, int64_t to_ns, uint64_t first_sequence,
      const std::function<bool(uint64_t, const EventColumns&, const StringTable&)>& visit,
      size_t batches_per_read);

  Store* store_;
  DictionaryCache* dictionaries_;
};

}  // namespace gpuspy::collector
