// gpuspyd --rebuild-index: a new index.sqlite from the segment files, for an index that is
// damaged (the daemon refuses to start on it, collector/storage/index_check.h) or lost.
//
// The segments hold every stored batch as it arrived (with its dictionary additions) and, since
// identity records (segment_file.h: kIdentityRecordSequence), every process's identity, repeated
// in each segment that holds batches of it (a lost segment takes no process's name along). The
// rebuild ingests them again, process by process in sequence order (not file order: quarantine
// moves records to the newest segment), through the same BatchIngestor as live ingest into
// a fresh store in the same data dir: processes, dictionaries, steps, batches and segments come
// out as ingest makes them, with no second copy of that logic. The old segments move to
// segments.rebuild-source/ first (an interrupted rebuild starts again from there) and are removed
// once every record was taken. A batch whose names were defined by a lost batch is kept with
// stand-ins for them (codec/dictionary_placeholders.h), counted. The damaged index is kept as
// index.sqlite.damaged-<unix time>.
// The one thing only the index holds, the jobs' own step patterns, is read back from the damaged
// index where its pages allow, before the batches go in (so their steps are found with them).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "collector/server/server_options.h"

namespace gpuspy::collector {

struct RebuildResult {
  uint64_t segment_files = 0;
  uint64_t processes = 0;
  uint64_t batches = 0;           // stored again
  uint64_t events = 0;
  uint64_t skipped_records = 0;   // unreadable or refused by ingest
  uint64_t batches_with_placeholders = 0;  // kept with stand-ins for names a lost batch defined
  uint64_t placeholder_definitions = 0;    // the stand-ins (strings, kernels, streams, threads, APIs)
  uint64_t processes_without_identity = 0;  // recorded under job "unknown": no identity record survived
  uint64_t unreadable_bytes = 0;  // segment tails that were not records
  uint64_t step_patterns = 0;     // jobs' own step patterns read back from the damaged index
  std::string damaged_index;      // where the old index went ("" when there was none)
  std::string kept_source;        // the old segments, kept when anything was skipped ("" if not)
};

// Runs with the data dir locked; the daemon must not be running on it.
absl::StatusOr<RebuildResult> RebuildIndex(const ServerOptions& options);

}  // namespace gpuspy::collector
