// What opening a data dir repairs, and segment quarantine: unacknowledged tails cut, vanished
// segments forgotten, orphan files removed, truncated or damaged segments quarantined (their
// readable records copied forward), missing identity records written again.
#include "collector/storage/embedded_store.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "collector/storage/status_macros.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {

namespace fs = std::filesystem;

// Segment files the index does not know: left by a crash between an eviction's index commit and
// its unlink, or between creating a new segment file and registering it (nothing in such a file
// was ever acknowledged). Neither holds anything readable, so they go.
absl::Status EmbeddedStore::RemoveOrphanSegments() {
  std::set<uint64_t> known;
  {
    absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare("SELECT segment_id FROM segments");
    if (!q.ok()) return q.status();
    absl::StatusOr<bool> row = (*q)->Step();
    for (; row.ok() && *row; row = (*q)->Step()) known.insert(static_cast<uint64_t>((*q)->Int(0)));
    if (!row.ok()) return row.status();
  }
  std::error_code ec;
  std::vector<fs::path> orphans;
  for (const auto& entry : fs::directory_iterator(SegmentDir(), ec)) {
    unsigned long long id = 0;
    char tail = 0;
    const std::string name = entry.path().filename().string();
    if (std::sscanf(name.c_str(), "seg-%llu.gse%c", &id, &tail) != 2 || tail != 'g' ||
        name != SegmentName(id)) {
      continue;  // not ours
    }
    if (known.count(id) == 0) orphans.push_back(entry.path());
  }
  if (ec) return absl::UnavailableError(absl::StrCat("cannot list ", SegmentDir(), ": ", ec.message()));
  if (!orphans.empty() && fresh_index_) {
    // Segments without their index: most likely index.sqlite was deleted or the data dir is
    // half-copied. Serving them needs an index (server/index_rebuild.h makes one), and deleting
    // someone's data silently is worse than refusing to start.
    return absl::FailedPreconditionError(absl::StrCat(
        options_.data_dir, " holds ", orphans.size(), " segment file(s) but no index; rebuild "
        "it from them with gpuspyd --rebuild-index, or move them away to start a new store"));
  }
  for (const fs::path& p : orphans) {
    spdlog::warn("storage: removing {}: no index entry (left by an interrupted eviction or roll)",
                 p.string());
    fs::remove(p, ec);
  }
  return absl::OkStatus();
}

// After a crash: records written past the last indexed one were never acknowledged (the index
// commit precedes the ack), so they are cut off; segments whose file vanished lose their rows.
absl::Status EmbeddedStore::Recover() {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> segs =
      db_->Prepare("SELECT segment_id FROM segments ORDER BY segment_id");
  if (!segs.ok()) return segs.status();
  std::vector<uint64_t> ids;
  for (absl::StatusOr<bool> row = (*segs)->Step(); row.ok() && *row; row = (*segs)->Step()) {
    ids.push_back(static_cast<uint64_t>((*segs)->Int(0)));
  }
  for (uint64_t id : ids) {
    if (!fs::exists(SegmentPath(id))) {
      spdlog::error("storage: segment {} is missing; its batches are dropped from the index",
                    SegmentPath(id));
      RETURN_IF_ERROR(EvictSegment(id));
    }
  }
  RETURN_IF_ERROR(RemoveOrphanSegments());
  uint64_t active = 1;
  {
    absl::StatusOr<std::unique_ptr<SqliteStatement>> max =
        db_->Prepare("SELECT MAX(segment_id) FROM segments");
    if (!max.ok()) return max.status();
    absl::StatusOr<bool> row = (*max)->Step();
    if (row.ok() && *row && (*max)->Int(0) > 0) active = static_cast<uint64_t>((*max)->Int(0));
  }
  RETURN_IF_ERROR(StartSegment(active));
  absl::StatusOr<std::unique_ptr<SqliteStatement>> end = db_->Prepare(
      "SELECT COALESCE(MAX(offset + length), 0) FROM batches WHERE segment_id = ?");
  if (!end.ok()) return end.status();
  (*end)->Bind(1, static_cast<int64_t>(active));
  absl::StatusOr<bool> row = (*end)->Step();
  if (!row.ok()) return row.status();
  uint64_t indexed_end = static_cast<uint64_t>((*end)->Int(0));
  if (indexed_end > 0) indexed_end += kSegmentHeaderBytes;
  if (active_->size() > indexed_end) {
    spdlog::warn("storage: {} has {} unacknowledged bytes after its last indexed record; "
                 "truncating",
                 active_->path(), active_->size() - indexed_end);
    RETURN_IF_ERROR(active_->Truncate(indexed_end));
  }
  absl::StatusOr<std::unique_ptr<SqliteStatement>> upd =
      db_->Prepare("UPDATE segments SET bytes = ? WHERE segment_id = ?");
  if (!upd.ok()) return upd.status();
  (*upd)->Bind(1, static_cast<int64_t>(active_->size())).Bind(2, static_cast<int64_t>(active));
  RETURN_IF_ERROR((*upd)->Run());
  if (active_->size() < indexed_end) {
    // The file lost acknowledged bytes (power loss without --fsync=batch, or outside damage).
    // Appending here would put new records where index rows still point, so writing moves on to
    // a fresh segment; reads of the lost records fail their check and are counted as corrupt.
    spdlog::error("storage: {} is {} bytes but its index reaches byte {}; the missing records are "
                  "lost, continuing in a new segment",
                  active_->path(), active_->size(), indexed_end);
    return RollSegment();
  }
  return absl::OkStatus();
}

absl::Status EmbeddedStore::QuarantineTruncatedSegments() {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare(
      "SELECT s.segment_id, COALESCE(MAX(b.offset + b.length), 0) FROM segments s "
      "LEFT JOIN batches b ON b.segment_id = s.segment_id WHERE s.sealed = 1 "
      "GROUP BY s.segment_id ORDER BY s.segment_id");
  if (!q.ok()) return q.status();
  std::vector<std::pair<uint64_t, uint64_t>> short_segments;  // id, bytes the index expects
  absl::StatusOr<bool> row = (*q)->Step();
  for (; row.ok() && *row; row = (*q)->Step()) {
    const uint64_t id = static_cast<uint64_t>((*q)->Int(0));
    uint64_t expected = static_cast<uint64_t>((*q)->Int(1));
    if (expected == 0) continue;
    expected += kSegmentHeaderBytes;
    std::error_code ec;
    const uint64_t size = fs::file_size(SegmentPath(id), ec);
    if (!ec && size < expected) short_segments.emplace_back(id, expected);
  }
  if (!row.ok()) return row.status();
  q->reset();
  for (const auto& [id, expected] : short_segments) {
    std::error_code ec;
    RETURN_IF_ERROR(QuarantineSegment(
        id, absl::StrCat("truncated: ", fs::file_size(SegmentPath(id), ec), " bytes, its index "
                         "reaches byte ", expected)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<IndexedRecord>> EmbeddedStore::RecordsOf(uint64_t id,
                                                                     bool identities_only) {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare(
      identities_only ? "SELECT process_id, sequence, offset, length FROM batches "
                        "WHERE segment_id = ? AND sequence = 0 ORDER BY offset"
                      : "SELECT process_id, sequence, offset, length FROM batches "
                        "WHERE segment_id = ? ORDER BY offset");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, static_cast<int64_t>(id));
  std::vector<IndexedRecord> records;
  absl::StatusOr<bool> row = (*q)->Step();
  for (; row.ok() && *row; row = (*q)->Step()) {
    records.push_back({static_cast<uint64_t>((*q)->Int(0)), static_cast<uint64_t>((*q)->Int(1)),
                       static_cast<uint64_t>((*q)->Int(2)), static_cast<uint64_t>((*q)->Int(3))});
  }
  if (!row.ok()) return row.status();
  return records;
}

absl::Status EmbeddedStore::QuarantineSegment(uint64_t id, const std::string& why) {
  absl::StatusOr<std::vector<IndexedRecord>> indexed = RecordsOf(id, /*identities_only=*/false);
  if (!indexed.ok()) return indexed.status();
  std::vector<IndexedRecord> records = std::move(*indexed);
  // Never copy into the file being quarantined.
  if (id == active_id_) RETURN_IF_ERROR(RollSegment());
  if (auto it = read_fds_.find(id); it != read_fds_.end()) {
    close(it->second);
    read_fds_.erase(it);
  }
  const uint64_t before = active_->size();
  absl::StatusOr<SalvageResult> salvaged = SalvageRecords(SegmentPath(id), records, active_.get());
  if (!salvaged.ok()) {
    (void)active_->Truncate(before);
    return salvaged.status();
  }
  if (options_.fsync_each_batch) RETURN_IF_ERROR(active_->Sync());
  // One transaction: the copies become the records, the lost ones are forgotten (their process
  // then counts them as missing batches), and the damaged segment leaves the index. A crash
  // before the commit leaves the copies as an unindexed tail (cut on open); after it, before the
  // move, the file is an orphan and removed on open (its good records are safe in their copies).
  auto run = [&](const std::string& sql, std::initializer_list<int64_t> args) -> absl::Status {
    absl::StatusOr<std::unique_ptr<SqliteStatement>> st = db_->Prepare(sql);
    if (!st.ok()) return st.status();
    int i = 0;
    for (int64_t a : args) (*st)->Bind(++i, a);
    return (*st)->Run();
  };
  absl::Status st = db_->Exec("BEGIN IMMEDIATE");
  std::set<uint64_t> touched;  // processes that lost batches
  for (const SalvageResult::Moved& m : salvaged->moved) {
    if (!st.ok()) break;
    st = run("UPDATE batches SET segment_id = ?, offset = ?, length = ? "
             "WHERE process_id = ? AND sequence = ?",
             {static_cast<int64_t>(active_id_), static_cast<int64_t>(m.new_offset),
              static_cast<int64_t>(m.new_length), static_cast<int64_t>(m.record.process_id),
              static_cast<int64_t>(m.record.sequence)});
  }
  for (const IndexedRecord& r : salvaged->lost) {
    if (!st.ok()) break;
    if (r.sequence != kIdentityRecordSequence) {  // a lost identity is backfilled on open
      st = run("UPDATE processes SET batch_count = MAX(batch_count - 1, 0), event_count = "
               "MAX(event_count - (SELECT event_count FROM batches WHERE process_id = ?1 AND "
               "sequence = ?2), 0) WHERE process_id = ?1",
               {static_cast<int64_t>(r.process_id), static_cast<int64_t>(r.sequence)});
      touched.insert(r.process_id);
    }
    if (st.ok()) {
      st = run("DELETE FROM batches WHERE process_id = ? AND sequence = ?",
               {static_cast<int64_t>(r.process_id), static_cast<int64_t>(r.sequence)});
    }
  }
  for (uint64_t p : touched) {
    if (st.ok()) st = ForgetStepsWithoutData(p);
  }
  if (st.ok()) st = run("DELETE FROM segments WHERE segment_id = ?", {static_cast<int64_t>(id)});
  if (st.ok()) {
    st = run("UPDATE segments SET bytes = ?, last_write = ? WHERE segment_id = ?",
             {static_cast<int64_t>(active_->size()), NowNs(), static_cast<int64_t>(active_id_)});
  }
  if (st.ok()) st = db_->Exec("COMMIT");
  if (!st.ok()) {
    (void)db_->Exec("ROLLBACK");
    (void)active_->Truncate(before);
    return st;
  }
  const std::string summary = absl::StrCat(
      why, "; ", salvaged->moved.size(), " record(s) copied to ", SegmentName(active_id_), ", ",
      salvaged->lost.size(), " lost",
      salvaged->first_error.empty() ? "" : absl::StrCat(" (first: ", salvaged->first_error, ")"));
  ++stats_.segments_quarantined;
  stats_.records_lost += salvaged->lost.size();
  spdlog::error("storage: {} is damaged ({}); moved to {}/quarantine/", SegmentPath(id), summary,
                SegmentDir());
  if (absl::Status moved = MoveToQuarantine(SegmentPath(id), SegmentDir() + "/quarantine", summary);
      !moved.ok()) {
    spdlog::error("storage: {}", moved.ToString());
  }
  return absl::OkStatus();
}

// Processes indexed before identity records existed (or whose record was lost) get one, so that
// every data dir can be rebuilt from its segments.
absl::Status EmbeddedStore::BackfillIdentityRecords() {
  std::vector<std::pair<uint64_t, std::string>> missing;
  {
    absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare(
        "SELECT process_id, identity FROM processes p WHERE NOT EXISTS (SELECT 1 FROM batches b "
        "WHERE b.process_id = p.process_id AND b.sequence = 0) ORDER BY process_id");
    if (!q.ok()) return q.status();
    absl::StatusOr<bool> row = (*q)->Step();
    for (; row.ok() && *row; row = (*q)->Step()) {
      missing.emplace_back(static_cast<uint64_t>((*q)->Int(0)), (*q)->Blob(1));
    }
    if (!row.ok()) return row.status();
  }
  for (const auto& [id, blob] : missing) RETURN_IF_ERROR(WriteIdentityRecord(id, blob));
  if (!missing.empty()) {
    // (storage does not link the analysis library's CountOf: the one noun is spelled here)
    spdlog::info("storage: identity records written for {} {}", missing.size(),
                 missing.size() == 1 ? "process" : "processes");
  }
  return absl::OkStatus();
}

}  // namespace gpuspy::collector
