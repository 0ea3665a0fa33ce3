// Append-only segment files holding stored batches. Each record carries its own header and a
// checksum, so a damaged or truncated file is detected per record and the rest stays readable.
//
// Record: [magic u32][payload bytes u32][crc32 of payload u32][flags u32]
//         [process_id u64][sequence u64][payload]
// flags bit 0: the payload is zstd-compressed (the checksum covers the stored bytes, so damage is
// found before decompressing). Files written before compression existed have flags 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuspy::collector {

inline constexpr uint32_t kSegmentRecordMagic = 0x59505347;  // "GSPY"
inline constexpr size_t kSegmentHeaderBytes = 32;
inline constexpr uint32_t kSegmentFlagZstd = 1;
// A record with sequence 0 (batches start at 1) holds its process's identity (a serialized
// gpuspy.v1.ProcessIdentity, uncompressed): with it the segments alone rebuild the index. Every
// segment holds the identity of each process it has batches of (embedded_store_identity.cc), so
// a lost segment loses no names. Segments written before that hold one per process, in the
// segment that was active when it was first stored or changed: they are read the same way, the
// record format is unchanged (a process whose only record is lost goes to job "unknown").
inline constexpr uint64_t kIdentityRecordSequence = 0;
// A decompressed payload larger than this is treated as corruption (the ingest limit is lower).
inline constexpr size_t kMaxStoredPayloadBytes = 1ull << 30;

// The segment currently being written.
class SegmentWriter {
 public:
  static absl::StatusOr<std::unique_ptr<SegmentWriter>> Open(const std::string& path);
  ~SegmentWriter();

  // Opens (creating if missing) the segment at `path`. A file that cannot be created for lack of
  // space or quota -> ResourceExhausted, other failures -> Unavailable.
  // Appends one record; returns its offset. On any failure the file is cut back to its previous
  // size, so a failed append leaves no partial record. ENOSPC/EFBIG/EDQUOT -> ResourceExhausted,
  // other errors -> Internal; the message names the file and the errno text. Payloads must fit
  // the header's u32 length (InvalidArgument otherwise). Short writes are continued.
  absl::StatusOr<uint64_t> Append(uint64_t process_id, uint64_t sequence, const std::string& payload,
                                  uint32_t flags = 0);
  // Cuts the file back to `bytes` (drops records that were written but never indexed).
  absl::Status Truncate(uint64_t bytes);
  absl::Status Sync();
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  SegmentWriter(std::string path, int fd, uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_;
  uint64_t size_;
};

// fsyncs a directory, so that files created in it survive a power loss.
absl::Status SyncDirectory(const std::string& dir);

// Reads and verifies the record at `offset` whose stored payload is `length` bytes, and returns
// the payload (decompressed if it was stored compressed). DataLoss when the header or checksum
// does not match, the record is cut short or does not decompress; NotFound when the file is gone.
absl::StatusOr<std::string> ReadSegmentRecord(int fd, const std::string& path, uint64_t offset,
                                              uint64_t length, uint64_t process_id,
                                              uint64_t sequence);

// A record's place and header, as found by reading a segment file front to back.
struct ScannedRecord {
  uint64_t offset = 0;  // of the header
  uint64_t length = 0;  // stored payload bytes
  uint64_t process_id = 0;
  uint64_t sequence = 0;
};
// The records of the segment file at `path` in file order, for rebuilding the index from the
// segments. Stops at the first header that is not a record or a record cut short (a torn tail or
// damage: `*unreadable_bytes` is what was left, 0 when the whole file was read). Checksums are
// not verified here (ReadSegmentRecord does).
absl::StatusOr<std::vector<ScannedRecord>> ScanSegmentRecords(const std::string& path,
                                                              uint64_t* unreadable_bytes);

// A record as stored: its payload bytes (compressed or not) and flags, checksum verified.
struct StoredRecord {
  std::string bytes;
  uint32_t flags = 0;
};
// Like ReadSegmentRecord, without decompressing: for copying records between segments.
absl::StatusOr<StoredRecord> ReadStoredRecord(int fd, const std::string& path, uint64_t offset,
                                              uint64_t length, uint64_t process_id,
                                              uint64_t sequence);

}  // namespace gpuspy::collector
