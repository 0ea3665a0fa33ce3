// Damaged segment files: what can still be read is copied out, the file is moved aside.
//
// A segment is found damaged when a record fails its checks on read (checksum, header, cut
// short, does not decompress) or when, on open, a sealed segment is shorter than its index says.
// Skipping the bad record on every read would report the same loss forever and leave a file that
// fails again at the next bit flip; deleting the file would lose the good records with it. So the
// good records are copied, as stored, to the active segment, their index rows repointed, the rows
// of the lost ones dropped (the process then shows them as missing batches), and the file goes to
// <data_dir>/segments/quarantine/ with a note saying why, for whoever wants to look at it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "collector/storage/segment_file.h"

namespace gpuspy::collector {

// One indexed record of a segment.
struct IndexedRecord {
  uint64_t process_id = 0;
  uint64_t sequence = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct SalvageResult {
  struct Moved {
    IndexedRecord record;
    uint64_t new_offset = 0;
    uint64_t new_length = 0;
  };
  std::vector<Moved> moved;          // readable, now in `out`
  std::vector<IndexedRecord> lost;   // failed a check
  std::string first_error;           // what was wrong with the first lost record
};

// Copies every record of the segment at `path` that passes all its checks to `out`, unchanged.
// A record that cannot be written to `out` stops the salvage with that error (nothing is lost
// yet: the caller commits only a complete result).
absl::StatusOr<SalvageResult> SalvageRecords(const std::string& path,
                                             const std::vector<IndexedRecord>& records,
                                             SegmentWriter* out);

// Moves `path` into `quarantine_dir` (created if needed) with a "<name>.why" note beside it.
absl::Status MoveToQuarantine(const std::string& path, const std::string& quarantine_dir,
                              const std::string& why);

}  // namespace gpuspy::collector
