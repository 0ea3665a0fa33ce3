// Collector-side dictionary of one process: everything its batches' refs may point at.
#pragma once

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "gpuspy/v1/wire.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy {

struct KernelSignature {
  StringRef name = 0;
  LaunchShape shape;
};

struct ApiFunction {
  ApiDomain domain = ApiDomain::kUnknown;
  uint32_t cbid = 0;
  StringRef name = 0;
};

class ProcessDictionary {
 public:
  // Adds definitions. Fails (and may have applied a prefix of them) when a ref is 0, redefined
  // with a different value, or points at an undefined string.
  absl::Status Apply(const v1::Dictionary& defs);

  const StringTable& strings() const { return strings_; }
  const KernelSignature* signature(uint32_t ref) const { return Find(signatures_, ref); }
  const StreamKey* stream(uint32_t ref) const { return Find(streams_, ref); }
  const uint32_t* thread(uint32_t ref) const { return Find(threads_, ref); }
  // Names the producer gave its threads (ThreadDef.name_ref: a trace's thread_name), by OS
  // thread id; a thread defined without one is absent.
  const absl::flat_hash_map<uint32_t, StringRef>& thread_names() const { return thread_names_; }
  const ApiFunction* api(uint32_t ref) const { return Find(apis_, ref); }
  size_t definition_count() const {
    return strings_.size() + signatures_.size() + streams_.size() + threads_.size() + apis_.size();
  }

 private:
  template <typename T>
  static const T* Find(const absl::flat_hash_map<uint32_t, T>& map, uint32_t ref) {
    auto it = map.find(ref);
    return it == map.end() ? nullptr : &it->second;
  }

  StringTable strings_;
  absl::flat_hash_map<uint32_t, KernelSignature> signatures_;
  absl::flat_hash_map<uint32_t, StreamKey> streams_;
  absl::flat_hash_map<uint32_t, uint32_t> threads_;
  absl::flat_hash_map<uint32_t, StringRef> thread_names_;
  absl::flat_hash_map<uint32_t, ApiFunction> apis_;
};

}  // namespace gpuspy
