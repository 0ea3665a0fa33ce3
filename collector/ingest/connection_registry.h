// Which processes have an open ingest stream right now. Queries report "connected" from it; the
// attach work pushes commands through it.
#pragma once

#include <cstdint>
#include <mutex>

#include "absl/container/flat_hash_map.h"

namespace gpuspy::collector {

class ConnectionRegistry {
 public:
  void Opened(uint64_t process_id);
  void Closed(uint64_t process_id);
  bool IsConnected(uint64_t process_id) const;

 private:
  mutable std::mutex mu_;
  absl::flat_hash_map<uint64_t, int> open_streams_;
};

}  // namespace gpuspy::collector
