// Per process: how often an overloaded collector turned it away (stream refused, batch refused,
// batch made to wait). Kept past the process's disconnect, since a refused process is often not
// connected, and shown with it in the process listing. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::collector {

enum class OverloadReason { kStreamRefused, kBatchRefused, kBatchDeferred };

class OverloadLedger {
 public:
  // At most this many processes are remembered; past it the one refused longest ago is forgotten
  // (the listing then shows zeros for it, the collector-wide totals stay right).
  static constexpr size_t kMaxProcesses = 100'000;

  void Note(uint64_t process_id, OverloadReason reason, int64_t now_unix_ns);
  // Zeros for a process never refused.
  v1::OverloadCounters Get(uint64_t process_id) const;
  size_t size() const;

 private:
  mutable std::mutex mu_;
  absl::flat_hash_map<uint64_t, v1::OverloadCounters> by_process_;
};

}  // namespace gpuspy::collector
