// One ClassifyKernel per interned kernel name, shared by the passes over one process's steps. A
// training loop launches the same few hundred kernels every step, and each pass (the step's
// collectives, the diff's step facts) used to keep a memo of its own, per step; this one lives as
// long as the analysis of the process. Results are those of ClassifyKernel: a name's class does
// not depend on which pass asks. Not thread-safe: one per analysis.
#pragma once

#include "absl/container/flat_hash_map.h"
#include "analysis/kernel_classifier.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

class KernelClasses {
 public:
  // The class of `name`, interned in `strings`. Refs are only meaningful within their table:
  // asked with another table, it forgets what it knew and starts afresh.
  KernelClass Of(const StringTable& strings, StringRef name);
  bool IsCommunication(const StringTable& strings, StringRef name) {
    return Of(strings, name) == KernelClass::kCommunication;
  }
  // Distinct names classified since the last start (for tests).
  size_t size() const { return by_name_.size(); }

 private:
  const StringTable* strings_ = nullptr;
  absl::flat_hash_map<StringRef, KernelClass> by_name_;
};

}  // namespace gpuspy::analysis
