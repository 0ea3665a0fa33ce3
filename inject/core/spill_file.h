// Encoded batches that could not be delivered, kept on local disk until the collector is back.
// Bounded: past max_bytes, Append refuses and the caller counts the batch as dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuspy::inject {

class SpillFile {
 public:
  // The file is created on first Append (a process that never spills leaves nothing behind).
  SpillFile(std::string path, uint64_t max_bytes) : path_(std::move(path)), max_bytes_(max_bytes) {}

  // ResourceExhausted when the bound would be exceeded; Unavailable on I/O errors;
  // PermissionDenied when the directory is not private to us (EnsurePrivateDirectory).
  absl::Status Append(const std::string& serialized_batch);
  // Every batch spilled so far, oldest first. Records failing their checksum (a torn write at a
  // crash) end the read: what follows them is not trusted.
  absl::StatusOr<std::vector<std::string>> ReadAll() const;

  struct ReplayResult {
    uint64_t delivered = 0;  // batches `deliver` took
    uint64_t kept = 0;       // batches still spilled (from the first one `deliver` refused)
    bool torn = false;       // a damaged record ended the file; it and what followed are gone
  };
  // Hands the spilled batches to `deliver`, oldest first, holding one in memory at a time (a
  // spill can be hundreds of MiB; the application's memory must not grow with it). Stops at the
  // first batch `deliver` returns false for: that one and all after it stay spilled, in order.
  // Unavailable when the file cannot be opened (the spill is then cleared).
  absl::StatusOr<ReplayResult> Replay(const std::function<bool(const std::string&)>& deliver);
  // Forgets everything (after a successful replay).
  void Clear();

  bool empty() const { return head_ == bytes_; }
  // Bytes on disk, replayed head included (what the bound applies to).
  uint64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  uint64_t max_bytes_;
  uint64_t bytes_ = 0;  // the file's size
  uint64_t head_ = 0;   // where the first batch not yet replayed starts
  bool directory_checked_ = false;  // once ours, it stays ours: re-checked only after a failure
};

}  // namespace gpuspy::inject
