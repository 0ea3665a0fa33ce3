#include "collector/ingest/connection_registry.h"

namespace gpuspy::collector {

void ConnectionRegistry::Opened(uint64_t process_id) {
  std::lock_guard lock(mu_);
  ++open_streams_[process_id];
}

void ConnectionRegistry::Closed(uint64_t process_id) {
  std::lock_guard lock(mu_);
  auto it = open_streams_.find(process_id);
  if (it == open_streams_.end()) return;
  if (--it->second <= 0) open_streams_.erase(it);
}

bool ConnectionRegistry::IsConnected(uint64_t process_id) const {
  std::lock_guard lock(mu_);
  return open_streams_.contains(process_id);
}

}  // namespace gpuspy::collector
