// Decoded process dictionaries, shared by ingest (which extends them) and queries (which read
// them). Loaded from the Store on first use, then kept: a process's dictionary is small (its
// distinct names) and every query of that process needs it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "codec/process_dictionary.h"
#include "collector/storage/store.h"

namespace gpuspy::collector {

class DictionaryCache {
 public:
  struct Entry {
    // Writers (ingest) take it exclusively; readers (queries resolving names) shared.
    std::shared_mutex mu;
    ProcessDictionary dict;
  };

  explicit DictionaryCache(Store* store) : store_(store) {}

  absl::StatusOr<std::shared_ptr<Entry>> Get(uint64_t process_id);
  // Drops the cached copy (e.g. after a failed Apply left it partially extended); the next Get
  // reloads what the store has.
  void Invalidate(uint64_t process_id);

 private:
  Store* store_;
  std::mutex mu_;
  absl::flat_hash_map<uint64_t, std::shared_ptr<Entry>> entries_;
};

}  // namespace gpuspy::collector
