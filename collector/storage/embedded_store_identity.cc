// Identity records (segment_file.h: kIdentityRecordSequence): a process's ProcessIdentity in the
// segment files, so that `gpuspyd --rebuild-index` names every process from the segments alone.
//
// One is written when a process is first stored or its identity changes, and again in every
// segment before the process's first batch there (AppendBatch): a segment that is lost (deleted,
// damaged beyond salvage) then takes no process's name and rank with it, as long as any segment
// holding that process's batches survives. Once, a rebuild after the loss of the first segment
// listed a surviving 44,017 of 69,046 events under job "unknown" (issue 45). The index points at
// the newest record of each process (row `sequence = 0` in `batches`); the older ones stay in
// their segments unindexed, read only by a rebuild, which takes the last one it finds.
#include "absl/strings/str_cat.h"
#include "collector/storage/embedded_store.h"
#include "collector/storage/status_macros.h"

namespace gpuspy::collector {

// The identity is indexed like a batch (sequence 0), so recovery keeps it, quarantine salvages it
// and eviction carries it forward (EvictSegment); readers of batches skip sequence 0.
absl::Status EmbeddedStore::WriteIdentityRecord(uint64_t process_id, const std::string& blob) {
  const uint64_t record = kSegmentHeaderBytes + blob.size();
  if (active_->size() > 0 && active_->size() + record > options_.segment_max_bytes) {
    RETURN_IF_ERROR(RollSegment());
  }
  const uint64_t before = active_->size();
  absl::StatusOr<uint64_t> offset = active_->Append(process_id, kIdentityRecordSequence, blob);
  if (!offset.ok()) return offset.status();
  absl::StatusOr<std::unique_ptr<SqliteStatement>> ins = db_->Prepare(
      "INSERT OR REPLACE INTO batches(process_id, sequence, min_ns, max_ns, event_count, "
      "segment_id, offset, length) VALUES(?,0,0,0,0,?,?,?)");
  absl::Status st = ins.status();
  if (st.ok()) {
    (*ins)->Bind(1, static_cast<int64_t>(process_id)).Bind(2, static_cast<int64_t>(active_id_))
        .Bind(3, static_cast<int64_t>(*offset)).Bind(4, static_cast<int64_t>(blob.size()));
    st = (*ins)->Run();
  }
  if (!st.ok()) {
    (void)active_->Truncate(before);
    return st;
  }
  return NoteActiveBytes();
}

absl::StatusOr<std::string> EmbeddedStore::IdentityBlob(uint64_t process_id) {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q =
      db_->Prepare("SELECT identity FROM processes WHERE process_id = ?");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, static_cast<int64_t>(process_id));
  absl::StatusOr<bool> row = (*q)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(absl::StrCat("no process ", process_id));
  std::string blob = (*q)->Blob(0);
  (*q)->Reset();
  return blob;
}

}  // namespace gpuspy::collector
