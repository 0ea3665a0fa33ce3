#include "collector/live/overload_ledger.h"

#include <algorithm>

namespace gpuspy::collector {

void OverloadLedger::Note(uint64_t process_id, OverloadReason reason, int64_t now_unix_ns) {
  std::lock_guard lock(mu_);
  if (by_process_.size() >= kMaxProcesses && !by_process_.contains(process_id)) {
    // Rare (only with more refused processes than any deployment has): a linear scan is fine.
    auto oldest = std::min_element(by_process_.begin(), by_process_.end(), [](const auto& a,
                                                                             const auto& b) {
      return a.second.last_refused_unix_ns() < b.second.last_refused_unix_ns();
    });
    by_process_.erase(oldest);
  }
  v1::OverloadCounters& c = by_process_[process_id];
  switch (reason) {
    case OverloadReason::kStreamRefused:
      c.set_streams_refused(c.streams_refused() + 1);
      c.set_last_refused_unix_ns(now_unix_ns);
      break;
    case OverloadReason::kBatchRefused:
      c.set_batches_refused(c.batches_refused() + 1);
      c.set_last_refused_unix_ns(now_unix_ns);
      break;
    case OverloadReason::kBatchDeferred:
      c.set_batches_deferred(c.batches_deferred() + 1);
      break;
  }
}

v1::OverloadCounters OverloadLedger::Get(uint64_t process_id) const {
  std::lock_guard lock(mu_);
  auto it = by_process_.find(process_id);
  return it == by_process_.end() ? v1::OverloadCounters() : it->second;
}

size_t OverloadLedger::size() const {
  std::lock_guard lock(mu_);
  return by_process_.size();
}

}  // namespace gpuspy::collector
