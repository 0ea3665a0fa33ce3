// Model events -> compact wire batches (gpuspy.v1.EventBatch), producer side.
//
// One encoder per process (per connection lifetime of dictionary state). Not thread-safe: the
// producer's sender thread owns it. See wire.proto for the encoding rules.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gpuspy/v1/wire.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy {

class BatchEncoder {
 public:
  // `strings` is the producer's table (it interns names while capturing); it must outlive the
  // encoder. The encoder only reads it.
  explicit BatchEncoder(const StringTable* strings) : strings_(strings) {}

  // Encodes `events` as batch `sequence`. The batch carries every dictionary definition not
  // yet carried by an earlier batch of this encoder.
  void Encode(const EventColumns& events, uint64_t sequence, const LossCounters& loss,
              v1::EventBatch* out);

  // After a reconnect the collector may have lost what was sent: the next batch re-sends the
  // whole dictionary.
  void ResendAllDefinitions();

  // Names of host threads (OS thread id -> a string of `strings`: a trace's thread_name), sent
  // with each thread's definition (ThreadDef.name_ref), so the timeline can say "main thread",
  // "pin-memory thread". Must outlive the encoder; a thread already defined keeps its name.
  void SetThreadNames(const absl::flat_hash_map<uint32_t, StringRef>* names) { thread_names_ = names; }

 private:
  struct SignatureKey {
    StringRef name;
    LaunchShape shape;
    friend bool operator==(const SignatureKey&, const SignatureKey&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const SignatureKey& k) {
      const LaunchShape& s = k.shape;
      return H::combine(std::move(h), k.name, s.grid_x, s.grid_y, s.grid_z, s.block_x, s.block_y,
                        s.block_z, s.registers_per_thread, s.static_shared_bytes,
                        s.dynamic_shared_bytes);
    }
  };
  using StreamTuple = std::tuple<uint32_t, uint32_t, uint32_t>;
  using ApiTuple = std::tuple<uint8_t, uint32_t, StringRef>;

  uint32_t SignatureRef(StringRef name, const LaunchShape& shape);
  uint32_t StreamRef(const StreamKey& stream);
  uint32_t ThreadRef(uint32_t os_thread_id);
  uint32_t ApiRef(ApiDomain domain, uint32_t cbid, StringRef name);
  void EmitNewDefinitions(v1::Dictionary* out);

  const StringTable* strings_;
  size_t strings_sent_ = 0;

  absl::flat_hash_map<SignatureKey, uint32_t> signature_refs_;
  std::vector<SignatureKey> signatures_;  // index = ref - 1
  size_t signatures_sent_ = 0;

  absl::flat_hash_map<StreamTuple, uint32_t> stream_refs_;
  std::vector<StreamKey> streams_;
  size_t streams_sent_ = 0;

  absl::flat_hash_map<uint32_t, uint32_t> thread_refs_;
  std::vector<uint32_t> threads_;
  size_t threads_sent_ = 0;
  const absl::flat_hash_map<uint32_t, StringRef>* thread_names_ = nullptr;

  absl::flat_hash_map<ApiTuple, uint32_t> api_refs_;
  std::vector<ApiTuple> apis_;
  size_t apis_sent_ = 0;
};

}  // namespace gpuspy
