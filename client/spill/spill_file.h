// Encoded batches that could not be delivered, kept on local disk until the collector is back.
// Bounded: past max_bytes, Append refuses and the caller counts the batch as dropped.
//
// The file outlives its process when the process ends before the collector takes everything (a
// crash, or an exit while the collector was away or overloaded). So it starts with a header the
// owner chooses (its identity), and the owner holds an exclusive flock on it while it lives: a
// spill file nobody holds is an orphan, which another process of the same user claims
// (OrphanSpill) and delivers under the owner's identity (spill_adoption.h).
//
// Layout: "GPUSPILL", u32 version, u32 header length, u32 header checksum, header; then records,
// each u32 length, u32 checksum, serialized batch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuspy::inject {

// Where spill files go unless GPUSPY_SPILL_DIR says otherwise: /tmp/gpuspy-<uid>/spill.
std::string DefaultSpillDir();

struct SpillReplayResult {
  uint64_t delivered = 0;  // batches `deliver` took
  uint64_t kept = 0;       // batches still spilled (from the first one `deliver` refused)
  bool torn = false;       // a damaged record ended the file; it and what followed are gone
};

class SpillFile {
 public:
  using ReplayResult = SpillReplayResult;

  // The file is created on first Append (a process that never spills leaves nothing behind).
  SpillFile(std::string path, uint64_t max_bytes, std::string header = {})
      : path_(std::move(path)), max_bytes_(max_bytes), header_(std::move(header)) {}
  // Lets go of the file without removing it: what is still in it is left for adoption.
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  // ResourceExhausted when the bound would be exceeded; Unavailable on I/O errors;
  // PermissionDenied when the directory is not private to us (EnsurePrivateDirectory).
  absl::Status Append(const std::string& serialized_batch);
  // Every batch spilled so far, oldest first. Records failing their checksum (a torn write at a
  // crash) end the read: what follows them is not trusted.
  absl::StatusOr<std::vector<std::string>> ReadAll() const;

  // Hands the spilled batches to `deliver`, oldest first, holding one in memory at a time (a
  // spill can be hundreds of MiB; the application's memory must not grow with it). Stops at the
  // first batch `deliver` returns false for: that one and all after it stay spilled, in order.
  // When everything was taken (or the rest is damaged) the file is removed.
  absl::StatusOr<ReplayResult> Replay(const std::function<bool(const std::string&)>& deliver);
  // Forgets everything and removes the file.
  void Clear();
  // In a fork()ed child: lets go of the parent's file (its lock included, once the parent is gone
  // too) without touching it; the child never writes it.
  void AbandonAfterFork();

  bool empty() const { return head_ == bytes_; }
  // Bytes on disk, header and replayed head included (what the bound applies to).
  uint64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  absl::Status Create();

  std::string path_;
  uint64_t max_bytes_;
  std::string header_;
  int fd_ = -1;         // open (and flocked) from creation until Clear
  uint64_t bytes_ = 0;  // the file's size
  uint64_t head_ = 0;   // where the first batch not yet replayed starts
  bool directory_checked_ = false;  // once ours, it stays ours: re-checked only after a failure
};

// A spill file whose owner is gone (nobody holds its lock), claimed by this process: while the
// claim lives, no other process delivers it.
class OrphanSpill {
 public:
  // NotFound: gone, or already delivered by another claimant. FailedPrecondition: its owner
  // still runs (the lock is held) or another process claimed it first. DataLoss: not a spill file
  // this version can read (a damaged header, an older format); it is left where it is.
  static absl::StatusOr<std::unique_ptr<OrphanSpill>> Claim(const std::string& path);
  // For looking only (gpuspy spill): opens the file whether or not its owner still holds it;
  // `held` says whether it does. Replay works; Remove must not be called.
  static absl::StatusOr<std::unique_ptr<OrphanSpill>> Inspect(const std::string& path, bool* held);
  ~OrphanSpill();
  OrphanSpill(const OrphanSpill&) = delete;
  OrphanSpill& operator=(const OrphanSpill&) = delete;

  // What the owner wrote at the start (its identity).
  const std::string& header() const { return header_; }
  const std::string& path() const { return path_; }
  // Nothing but the header: its owner ended before spilling a batch into it.
  bool empty() const { return size_ <= data_start_; }
  // Every batch, oldest first, until `deliver` returns false or a damaged record.
  absl::StatusOr<SpillReplayResult> Replay(const std::function<bool(const std::string&)>& deliver);
  // Removes the file (everything in it was delivered) and releases the claim.
  void Remove();

 private:
  static absl::StatusOr<std::unique_ptr<OrphanSpill>> Open(const std::string& path, bool claim,
                                                           bool* held);
  OrphanSpill(std::string path, int fd, std::string header, uint64_t data_start, uint64_t size)
      : path_(std::move(path)), fd_(fd), header_(std::move(header)), data_start_(data_start),
        size_(size) {}

  std::string path_;
  int fd_;
  std::string header_;
  uint64_t data_start_;
  uint64_t size_;
};

}  // namespace gpuspy::inject
