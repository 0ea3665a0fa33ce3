// Encoded batches that could not be delivered, kept on local disk until the collector is back.
// Bounded: past max_bytes, Append refuses and the caller counts the batch as dropped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuspy::inject {

class SpillFile {
 public:
  // The file is created on first Append (a process that never spills leaves nothing behind).
  SpillFile(std::string path, uint64_t max_bytes) : path_(std::move(path)), max_bytes_(max_bytes) {}

  // ResourceExhausted when the bound would be exceeded; Unavailable on I/O errors.
  absl::Status Append(const std::string& serialized_batch);
  // Every batch spilled so far, oldest first. Records failing their checksum (a torn write at a
  // crash) end the read: what follows them is not trusted.
  absl::StatusOr<std::vector<std::string>> ReadAll() const;
  // Forgets everything (after a successful replay).
  void Clear();

  bool empty() const { return bytes_ == 0; }
  uint64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  uint64_t max_bytes_;
  uint64_t bytes_ = 0;
};

}  // namespace gpuspy::inject
