// Retention in the embedded store: whole segments are evicted, oldest first; the identity
// records in an evicted segment are carried into the active one first.
#include "collector/storage/embedded_store.h"

#include <unistd.h>

#include <filesystem>

#include "collector/storage/status_macros.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {

namespace fs = std::filesystem;

absl::Status EmbeddedStore::CarryIdentityRecords(uint64_t id) {
  absl::StatusOr<std::vector<IndexedRecord>> indexed = RecordsOf(id, /*identities_only=*/true);
  if (!indexed.ok()) return indexed.status();
  const std::vector<IndexedRecord> records = std::move(*indexed);
  if (records.empty() || id == active_id_) return absl::OkStatus();
  const uint64_t before = active_->size();
  absl::StatusOr<SalvageResult> copied = SalvageRecords(SegmentPath(id), records, active_.get());
  if (!copied.ok()) {
    (void)active_->Truncate(before);
    return copied.status();
  }
  carried_bytes_ += active_->size() - before;
  // An identity that cannot be read goes with the segment; BackfillIdentityRecords writes it
  // again from the processes table on the next open.
  for (const SalvageResult::Moved& m : copied->moved) {
    absl::StatusOr<std::unique_ptr<SqliteStatement>> upd = db_->Prepare(
        "UPDATE batches SET segment_id = ?, offset = ?, length = ? WHERE process_id = ? AND "
        "sequence = 0");
    if (!upd.ok()) return upd.status();
    (*upd)->Bind(1, static_cast<int64_t>(active_id_)).Bind(2, static_cast<int64_t>(m.new_offset))
        .Bind(3, static_cast<int64_t>(m.new_length)).Bind(4, static_cast<int64_t>(m.record.process_id));
    RETURN_IF_ERROR((*upd)->Run());
  }
  return NoteActiveBytes();
}

absl::StatusOr<bool> EmbeddedStore::HoldsBatches(uint64_t id) {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare(
      "SELECT EXISTS(SELECT 1 FROM batches WHERE segment_id = ? AND sequence > 0)");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, static_cast<int64_t>(id));
  absl::StatusOr<bool> row = (*q)->Step();
  if (!row.ok()) return row.status();
  return *row && (*q)->Int(0) != 0;
}

absl::Status EmbeddedStore::ForgetStepsWithoutData(uint64_t process_id) {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> oldest = db_->Prepare(
      "SELECT COALESCE(MIN(min_ns), 9223372036854775807) FROM batches "
      "WHERE process_id = ? AND sequence > 0");
  if (!oldest.ok()) return oldest.status();
  (*oldest)->Bind(1, static_cast<int64_t>(process_id));
  absl::StatusOr<bool> row = (*oldest)->Step();
  if (!row.ok()) return row.status();
  const int64_t oldest_ns = (*oldest)->Int(0);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> del =
      db_->Prepare("DELETE FROM steps WHERE process_id = ? AND end_ns < ?");
  if (!del.ok()) return del.status();
  (*del)->Bind(1, static_cast<int64_t>(process_id)).Bind(2, oldest_ns);
  return (*del)->Run();
}

absl::Status EmbeddedStore::EvictSegment(uint64_t id) {
  if (fs::exists(SegmentPath(id))) RETURN_IF_ERROR(CarryIdentityRecords(id));
  if (auto it = read_fds_.find(id); it != read_fds_.end()) {
    close(it->second);
    read_fds_.erase(it);
  }
  // Index first, file second: a crash in between leaves an orphan file, removed on the next open.
  RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  absl::Status st = ForgetSegmentRows(id);
  if (st.ok()) st = db_->Exec("COMMIT");
  if (!st.ok()) {
    (void)db_->Exec("ROLLBACK");
    return st;
  }
  std::error_code ec;
  fs::remove(SegmentPath(id), ec);
  if (ec) spdlog::warn("storage: cannot remove {}: {}", SegmentPath(id), ec.message());
  return absl::OkStatus();
}

absl::Status EmbeddedStore::ForgetSegmentRows(uint64_t id) {
  std::vector<uint64_t> processes;
  {
    absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare(
        "SELECT DISTINCT process_id FROM batches WHERE segment_id = ? AND sequence > 0");
    if (!q.ok()) return q.status();
    (*q)->Bind(1, static_cast<int64_t>(id));
    absl::StatusOr<bool> row = (*q)->Step();
    for (; row.ok() && *row; row = (*q)->Step()) processes.push_back(static_cast<uint64_t>((*q)->Int(0)));
    if (!row.ok()) return row.status();
  }
  // A process's event count is what is stored of it (gpuspy jobs); batch_count and max_sequence
  // keep what was ever stored, so that eviction is not mistaken for missing batches.
  for (const char* sql :
       {"UPDATE processes SET event_count = MAX(event_count - (SELECT COALESCE(SUM(event_count), 0) "
        "FROM batches b WHERE b.process_id = processes.process_id AND b.segment_id = ?1 AND "
        "b.sequence > 0), 0) WHERE process_id IN (SELECT process_id FROM batches WHERE segment_id = ?1)",
        "DELETE FROM batches WHERE segment_id = ?1", "DELETE FROM segments WHERE segment_id = ?1"}) {
    absl::StatusOr<std::unique_ptr<SqliteStatement>> stmt = db_->Prepare(sql);
    if (!stmt.ok()) return stmt.status();
    (*stmt)->Bind(1, static_cast<int64_t>(id));
    RETURN_IF_ERROR((*stmt)->Run());
  }
  for (uint64_t p : processes) RETURN_IF_ERROR(ForgetStepsWithoutData(p));
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> EmbeddedStore::EnforceRetention(const RetentionPolicy& policy,
                                                         int64_t now) {
  std::lock_guard lock(mu_);
  struct Seg {
    uint64_t id;
    uint64_t bytes;
    int64_t last_write;
  };
  std::vector<Seg> segs;
  uint64_t total = 0;
  {
    absl::StatusOr<std::unique_ptr<SqliteStatement>> q =
        db_->Prepare("SELECT segment_id, bytes, last_write FROM segments ORDER BY segment_id");
    if (!q.ok()) return q.status();
    absl::StatusOr<bool> row = (*q)->Step();
    for (; row.ok() && *row; row = (*q)->Step()) {
      segs.push_back({static_cast<uint64_t>((*q)->Int(0)), static_cast<uint64_t>((*q)->Int(1)),
                      (*q)->Int(2)});
      total += segs.back().bytes;
    }
    if (!row.ok()) return row.status();
  }
  // The index is on the same disk and under the same limit: uncounted, a store with many small
  // batches sat well past --retention-bytes (issue 34). It does not shrink when segments go
  // (SQLite reuses its free pages), so it is counted once, as a fixed part of the budget.
  total += IndexBytes();
  // The active segment is never evicted for size, even when it is the only one and over
  // max_bytes: it holds the newest data, which is what users look at, and it is bounded by
  // segment_max_bytes anyway, so the byte limit holds to within one segment (size max_bytes at
  // several segments). Once it has been idle past max_age, though, nothing new is arriving and
  // everything in it is expired: it is sealed (a fresh, empty segment takes over) and evicted.
  bool active_expired = policy.max_age_ns > 0 && active_->size() > 0 && !segs.empty() &&
                        segs.back().id == active_id_ &&
                        segs.back().last_write < now - policy.max_age_ns;
  if (active_expired) {
    absl::StatusOr<bool> holds = HoldsBatches(active_id_);
    if (!holds.ok()) return holds.status();
    active_expired = *holds;
  }
  if (active_expired) {
    RETURN_IF_ERROR(RollSegment());
  }
  uint64_t evicted = 0;
  for (const Seg& s : segs) {
    if (s.id == active_id_) break;
    const bool too_big = policy.max_bytes > 0 && total > policy.max_bytes;
    const bool too_old = policy.max_age_ns > 0 && s.last_write < now - policy.max_age_ns;
    if (!too_big && !too_old) break;  // oldest first: once one stays, all newer stay
    carried_bytes_ = 0;
    RETURN_IF_ERROR(EvictSegment(s.id));
    total = total - s.bytes + carried_bytes_;
    ++evicted;
  }
  stats_.segments_evicted += evicted;
  return evicted;
}

}  // namespace gpuspy::collector
