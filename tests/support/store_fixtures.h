// Small builders shared by the storage tests.
#pragma once

#include <cstdint>
#include <string>

#include "collector/storage/store.h"

namespace gpuspy::testing {

inline v1::ProcessIdentity TestIdentity(const std::string& key, const std::string& job) {
  v1::ProcessIdentity id;
  id.set_process_key(key);
  id.set_job_id(job);
  id.set_host("h");
  id.set_pid(1);
  return id;
}

// A batch whose payload is `payload_bytes` of a letter derived from the sequence.
inline collector::StoredBatch TestBatch(uint64_t process, uint64_t seq, int64_t min_ns,
                                        int64_t max_ns, size_t payload_bytes = 100,
                                        uint32_t events = 10) {
  collector::StoredBatch b;
  b.process_id = process;
  b.sequence = seq;
  b.min_ns = min_ns;
  b.max_ns = max_ns;
  b.event_count = events;
  // Incompressible bytes (a simple LCG seeded by the batch), so at-rest compression leaves sizes
  // as the tests reason about them; compression has tests of its own.
  b.payload.resize(payload_bytes);
  uint64_t x = process * 1'000'003 + seq * 7'919 + 1;
  for (char& c : b.payload) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>(x >> 56);
  }
  return b;
}

}  // namespace gpuspy::testing
