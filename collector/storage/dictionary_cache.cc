#include "collector/storage/dictionary_cache.h"

namespace gpuspy::collector {

absl::StatusOr<std::shared_ptr<DictionaryCache::Entry>> DictionaryCache::Get(uint64_t process_id) {
  {
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(process_id); it != entries_.end()) return it->second;
  }
  // Load outside the cache lock: a slow load must not stall other processes' lookups.
  absl::StatusOr<v1::Dictionary> defs = store_->LoadDictionary(process_id);
  if (!defs.ok()) return defs.status();
  auto entry = std::make_shared<Entry>();
  if (absl::Status st = entry->dict.Apply(*defs); !st.ok()) return st;
  std::lock_guard lock(mu_);
  auto [it, inserted] = entries_.try_emplace(process_id, entry);
  return it->second;  // another thread may have won the race: use its entry
}

void DictionaryCache::Invalidate(uint64_t process_id) {
  std::lock_guard lock(mu_);
  entries_.erase(process_id);
}

}  // namespace gpuspy::collector
