// The embedded store's Store calls: processes (with their identity records), dictionaries,
// batches (segment record first, index row second: acknowledged only once both are written) and
// steps.
#include "collector/storage/embedded_store.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "collector/storage/payload_codec.h"
#include "collector/storage/status_macros.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {

absl::StatusOr<uint64_t> EmbeddedStore::UpsertProcess(const v1::ProcessIdentity& identity,
                                                      int64_t now) {
  std::lock_guard lock(mu_);
  std::string blob;
  identity.SerializeToString(&blob);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> find =
      db_->Prepare("SELECT process_id, identity FROM processes WHERE process_key = ?");
  if (!find.ok()) return find.status();
  (*find)->Bind(1, identity.process_key());
  absl::StatusOr<bool> row = (*find)->Step();
  if (!row.ok()) return row.status();
  if (*row) {
    const int64_t id = (*find)->Int(0);
    const bool changed = (*find)->Blob(1) != blob;
    (*find)->Reset();
    absl::StatusOr<std::unique_ptr<SqliteStatement>> upd = db_->Prepare(
        "UPDATE processes SET identity = ?, job_id = ?, last_seen = ? WHERE process_id = ?");
    if (!upd.ok()) return upd.status();
    (*upd)->BindBlob(1, blob).Bind(2, identity.job_id()).Bind(3, now).Bind(4, id);
    RETURN_IF_ERROR((*upd)->Run());
    if (changed) RETURN_IF_ERROR(WriteIdentityRecord(static_cast<uint64_t>(id), blob));
    return static_cast<uint64_t>(id);
  }
  absl::StatusOr<std::unique_ptr<SqliteStatement>> ins = db_->Prepare(
      "INSERT INTO processes(process_key, job_id, identity, first_seen, last_seen, pending) "
      "VALUES(?,?,?,?,?,?)");
  if (!ins.ok()) return ins.status();
  // An import is pending until its last batch is stored (store.h: CommitImport).
  const int64_t pending = identity.content_sha256().empty() ? 0 : 1;
  (*ins)->Bind(1, identity.process_key()).Bind(2, identity.job_id()).BindBlob(3, blob)
      .Bind(4, now).Bind(5, now).Bind(6, pending);
  RETURN_IF_ERROR((*ins)->Run());
  const uint64_t id = static_cast<uint64_t>(db_->LastInsertId());
  RETURN_IF_ERROR(WriteIdentityRecord(id, blob));
  return id;
}

absl::StatusOr<std::vector<ProcessRecord>> EmbeddedStore::QueryProcesses(const std::string& where,
                                                                         const std::string& arg,
                                                                         int64_t id) {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare(
      "SELECT process_id, identity, first_seen, last_seen, event_count, batch_count, "
      "max_sequence, cupti_dropped, queue_dropped, spill_dropped FROM processes " +
      where + " ORDER BY process_id");
  if (!q.ok()) return q.status();
  if (!arg.empty()) (*q)->Bind(1, arg);
  if (id != 0) (*q)->Bind(1, id);
  std::vector<ProcessRecord> out;
  absl::StatusOr<bool> row = (*q)->Step();
  for (; row.ok() && *row; row = (*q)->Step()) {
    ProcessRecord r;
    r.process_id = static_cast<uint64_t>((*q)->Int(0));
    if (!r.identity.ParseFromString((*q)->Blob(1))) {
      return absl::DataLossError(absl::StrCat("process ", r.process_id, ": identity unreadable"));
    }
    r.first_seen_unix_ns = (*q)->Int(2);
    r.last_seen_unix_ns = (*q)->Int(3);
    r.event_count = static_cast<uint64_t>((*q)->Int(4));
    r.batch_count = static_cast<uint64_t>((*q)->Int(5));
    r.max_sequence = static_cast<uint64_t>((*q)->Int(6));
    r.loss = {static_cast<uint64_t>((*q)->Int(7)), static_cast<uint64_t>((*q)->Int(8)),
              static_cast<uint64_t>((*q)->Int(9))};
    out.push_back(std::move(r));
  }
  if (!row.ok()) return row.status();
  return out;
}

absl::StatusOr<ProcessRecord> EmbeddedStore::GetProcess(uint64_t process_id) {
  std::lock_guard lock(mu_);
  absl::StatusOr<std::vector<ProcessRecord>> r =
      QueryProcesses("WHERE process_id = ?", "", static_cast<int64_t>(process_id));
  if (!r.ok()) return r.status();
  if (r->empty()) return absl::NotFoundError(absl::StrCat("no process ", process_id));
  return std::move(r->front());
}

absl::StatusOr<std::vector<ProcessRecord>> EmbeddedStore::ListProcesses(const std::string& job_id) {
  std::lock_guard lock(mu_);
  // Pending imports are not there yet (store.h: CommitImport).
  if (job_id.empty()) return QueryProcesses("WHERE pending = 0", "", 0);
  return QueryProcesses("WHERE job_id = ? AND pending = 0", job_id, 0);
}

absl::Status EmbeddedStore::AppendDictionary(uint64_t process_id, const v1::Dictionary& defs) {
  std::lock_guard lock(mu_);
  std::string blob;
  defs.SerializeToString(&blob);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> ins =
      db_->Prepare("INSERT INTO dictionary(process_id, defs) VALUES(?,?)");
  if (!ins.ok()) return ins.status();
  (*ins)->Bind(1, static_cast<int64_t>(process_id)).BindBlob(2, blob);
  return (*ins)->Run();
}

absl::StatusOr<v1::Dictionary> EmbeddedStore::LoadDictionary(uint64_t process_id) {
  std::lock_guard lock(mu_);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q =
      db_->Prepare("SELECT defs FROM dictionary WHERE process_id = ? ORDER BY chunk");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, static_cast<int64_t>(process_id));
  v1::Dictionary out;
  absl::StatusOr<bool> row = (*q)->Step();
  for (; row.ok() && *row; row = (*q)->Step()) {
    // Repeated fields concatenate on merge: the union of all chunks, in arrival order.
    if (!out.MergeFromString((*q)->Blob(0))) {
      return absl::DataLossError(absl::StrCat("process ", process_id, ": dictionary unreadable"));
    }
  }
  if (!row.ok()) return row.status();
  return out;
}

absl::Status EmbeddedStore::AppendBatch(const StoredBatch& b) {
  std::lock_guard lock(mu_);
  uint64_t identity_segment = 0;  // where the process's newest identity record is (0: nowhere)
  {
    absl::StatusOr<std::unique_ptr<SqliteStatement>> check = db_->Prepare(
        "SELECT EXISTS(SELECT 1 FROM processes WHERE process_id = ?1), "
        "EXISTS(SELECT 1 FROM batches WHERE process_id = ?1 AND sequence = ?2), "
        "COALESCE((SELECT segment_id FROM batches WHERE process_id = ?1 AND sequence = 0), 0)");
    if (!check.ok()) return check.status();
    (*check)->Bind(1, static_cast<int64_t>(b.process_id)).Bind(2, static_cast<int64_t>(b.sequence));
    absl::StatusOr<bool> row = (*check)->Step();
    if (!row.ok()) return row.status();
    if (!*row || (*check)->Int(0) == 0) {
      return absl::NotFoundError(absl::StrCat("no process ", b.process_id));
    }
    if ((*check)->Int(1) != 0) {
      return absl::AlreadyExistsError(
          absl::StrCat("process ", b.process_id, " batch ", b.sequence, " is already stored"));
    }
    identity_segment = static_cast<uint64_t>((*check)->Int(2));
  }
  // At rest the batch is zstd'ed unless that does not make it smaller.
  std::string compressed = options_.compress ? CompressPayload(b.payload) : std::string();
  const bool zstd = !compressed.empty() && compressed.size() < b.payload.size();
  const std::string& stored = zstd ? compressed : b.payload;
  const uint64_t record = kSegmentHeaderBytes + stored.size();
  // The first batch of a process in a segment goes in behind the process's identity, so that the
  // loss of any one segment loses no process's name (embedded_store_identity.cc).
  std::optional<std::string> identity;
  auto fetch_identity = [&]() -> absl::Status {
    absl::StatusOr<std::string> blob = IdentityBlob(b.process_id);
    if (!blob.ok()) return blob.status();
    identity = *std::move(blob);
    return absl::OkStatus();
  };
  auto fail = [&](absl::Status st) {
    ++stats_.write_errors;
    return st;
  };
  if (identity_segment != active_id_) {
    if (absl::Status st = fetch_identity(); !st.ok()) return fail(st);
  }
  const uint64_t identity_record = identity ? kSegmentHeaderBytes + identity->size() : 0;
  if (active_->size() > 0 &&
      active_->size() + identity_record + record > options_.segment_max_bytes) {
    if (absl::Status st = RollSegment(); !st.ok()) return fail(st);
    if (!identity) {  // a fresh segment holds no identity yet
      if (absl::Status st = fetch_identity(); !st.ok()) return fail(st);
    }
  }
  // Both fit now, so WriteIdentityRecord does not roll: the identity and the batch share a segment.
  if (identity) {
    if (absl::Status st = WriteIdentityRecord(b.process_id, *identity); !st.ok()) return fail(st);
  }
  const uint64_t before = active_->size();
  absl::StatusOr<uint64_t> offset =
      active_->Append(b.process_id, b.sequence, stored, zstd ? kSegmentFlagZstd : 0);
  if (!offset.ok()) {
    ++stats_.write_errors;
    return offset.status();
  }
  auto undo = [&](absl::Status st) {
    ++stats_.write_errors;
    (void)db_->Exec("ROLLBACK");
    (void)active_->Truncate(before);
    return st;
  };
  if (options_.fsync_each_batch) {
    if (absl::Status st = active_->Sync(); !st.ok()) return undo(st);
  }
  const int64_t now = NowNs();
  if (absl::Status st = db_->Exec("BEGIN IMMEDIATE"); !st.ok()) return undo(st);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> ins = db_->Prepare(
      "INSERT INTO batches(process_id, sequence, min_ns, max_ns, event_count, segment_id, offset, "
      "length, cupti_dropped, queue_dropped, spill_dropped) VALUES(?,?,?,?,?,?,?,?,?,?,?)");
  if (!ins.ok()) return undo(ins.status());
  (*ins)->Bind(1, static_cast<int64_t>(b.process_id)).Bind(2, static_cast<int64_t>(b.sequence))
      .Bind(3, b.min_ns).Bind(4, b.max_ns).Bind(5, static_cast<int64_t>(b.event_count))
      .Bind(6, static_cast<int64_t>(active_id_)).Bind(7, static_cast<int64_t>(*offset))
      .Bind(8, static_cast<int64_t>(stored.size()))
      .Bind(9, static_cast<int64_t>(b.loss.cupti_dropped_records))
      .Bind(10, static_cast<int64_t>(b.loss.queue_dropped_events))
      .Bind(11, static_cast<int64_t>(b.loss.spill_dropped_events));
  if (absl::Status st = (*ins)->Run(); !st.ok()) return undo(st);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> proc = db_->Prepare(
      "UPDATE processes SET event_count = event_count + ?, batch_count = batch_count + 1, "
      "max_sequence = MAX(max_sequence, ?), cupti_dropped = MAX(cupti_dropped, ?), "
      "queue_dropped = MAX(queue_dropped, ?), spill_dropped = MAX(spill_dropped, ?), "
      "last_seen = ? WHERE process_id = ?");
  if (!proc.ok()) return undo(proc.status());
  (*proc)->Bind(1, static_cast<int64_t>(b.event_count)).Bind(2, static_cast<int64_t>(b.sequence))
      .Bind(3, static_cast<int64_t>(b.loss.cupti_dropped_records))
      .Bind(4, static_cast<int64_t>(b.loss.queue_dropped_events))
      .Bind(5, static_cast<int64_t>(b.loss.spill_dropped_events)).Bind(6, now)
      .Bind(7, static_cast<int64_t>(b.process_id));
  if (absl::Status st = (*proc)->Run(); !st.ok()) return undo(st);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> seg =
      db_->Prepare("UPDATE segments SET bytes = ?, last_write = ? WHERE segment_id = ?");
  if (!seg.ok()) return undo(seg.status());
  (*seg)->Bind(1, static_cast<int64_t>(active_->size())).Bind(2, now)
      .Bind(3, static_cast<int64_t>(active_id_));
  if (absl::Status st = (*seg)->Run(); !st.ok()) return undo(st);
  if (absl::Status st = db_->Exec("COMMIT"); !st.ok()) return undo(st);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoredBatch>> EmbeddedStore::ReadBatches(uint64_t process_id,
                                                                   int64_t from_ns, int64_t to_ns) {
  std::lock_guard lock(mu_);
  const bool all = from_ns == 0 && to_ns == 0;
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare(
      std::string("SELECT sequence, min_ns, max_ns, event_count, segment_id, offset, length "
                  "FROM batches WHERE process_id = ? AND sequence > 0") +
      (all ? "" : " AND max_ns >= ? AND min_ns < ?") + " ORDER BY sequence");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, static_cast<int64_t>(process_id));
  if (!all) (*q)->Bind(2, from_ns).Bind(3, to_ns);
  return ReadRowsLocked(process_id, **q);
}

absl::StatusOr<std::vector<StoredBatch>> EmbeddedStore::ReadBatchesAfter(uint64_t process_id,
                                                                        uint64_t after_sequence,
                                                                        size_t limit) {
  std::lock_guard lock(mu_);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare(
      "SELECT sequence, min_ns, max_ns, event_count, segment_id, offset, length FROM batches "
      "WHERE process_id = ? AND sequence > ? ORDER BY sequence LIMIT ?");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, static_cast<int64_t>(process_id)).Bind(2, static_cast<int64_t>(after_sequence))
      .Bind(3, static_cast<int64_t>(limit));
  return ReadRowsLocked(process_id, **q);
}

absl::StatusOr<std::vector<StoredBatch>> EmbeddedStore::ReadRowsLocked(uint64_t process_id,
                                                                      SqliteStatement& query) {
  SqliteStatement* q = &query;
  std::vector<StoredBatch> out;
  std::map<uint64_t, std::string> damaged;  // segment -> what was wrong
  absl::StatusOr<bool> row = q->Step();
  for (; row.ok() && *row; row = q->Step()) {
    StoredBatch b;
    b.process_id = process_id;
    b.sequence = static_cast<uint64_t>(q->Int(0));
    b.min_ns = q->Int(1);
    b.max_ns = q->Int(2);
    b.event_count = static_cast<uint32_t>(q->Int(3));
    const uint64_t segment = static_cast<uint64_t>(q->Int(4));
    const int fd = ReadFd(segment);
    absl::StatusOr<std::string> payload =
        fd < 0 ? absl::NotFoundError(SegmentPath(segment) + " is missing")
               : ReadSegmentRecord(fd, SegmentPath(segment), static_cast<uint64_t>(q->Int(5)),
                                   static_cast<uint64_t>(q->Int(6)), process_id, b.sequence);
    if (!payload.ok()) {
      ++stats_.corrupt_records;
      spdlog::error("storage: process {} batch {} skipped: {}", process_id, b.sequence,
                    payload.status().ToString());
      damaged.emplace(segment, std::string(payload.status().message()));
      continue;
    }
    b.payload = std::move(*payload);
    out.push_back(std::move(b));
  }
  if (!row.ok()) return row.status();
  query.Reset();
  for (const auto& [segment, why] : damaged) {
    if (absl::Status st = QuarantineSegment(segment, why); !st.ok()) {
      spdlog::error("storage: quarantining {} failed: {}", SegmentPath(segment), st.ToString());
    }
  }
  return out;
}

absl::StatusOr<std::vector<BatchMark>> EmbeddedStore::ListBatchMarks(uint64_t process_id) {
  std::lock_guard lock(mu_);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare(
      "SELECT sequence, min_ns, max_ns, cupti_dropped, queue_dropped, spill_dropped FROM batches "
      "WHERE process_id = ? AND sequence > 0 ORDER BY sequence");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, static_cast<int64_t>(process_id));
  std::vector<BatchMark> out;
  absl::StatusOr<bool> row = (*q)->Step();
  for (; row.ok() && *row; row = (*q)->Step()) {
    BatchMark m;
    m.sequence = static_cast<uint64_t>((*q)->Int(0));
    m.min_ns = (*q)->Int(1);
    m.max_ns = (*q)->Int(2);
    m.loss = {static_cast<uint64_t>((*q)->Int(3)), static_cast<uint64_t>((*q)->Int(4)),
              static_cast<uint64_t>((*q)->Int(5))};
    out.push_back(m);
  }
  if (!row.ok()) return row.status();
  return out;
}

absl::Status EmbeddedStore::UpsertSteps(const std::vector<StepRecord>& steps) {
  std::lock_guard lock(mu_);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> ins = db_->Prepare(
      "INSERT OR REPLACE INTO steps(process_id, number, start_ns, end_ns, source) "
      "VALUES(?,?,?,?,?)");
  if (!ins.ok()) return ins.status();
  RETURN_IF_ERROR(db_->Exec("BEGIN"));
  for (const StepRecord& s : steps) {
    (*ins)->Bind(1, static_cast<int64_t>(s.process_id)).Bind(2, s.number).Bind(3, s.start_ns)
        .Bind(4, s.end_ns).Bind(5, s.source);
    if (absl::Status st = (*ins)->Run(); !st.ok()) {
      (void)db_->Exec("ROLLBACK");
      return st;
    }
  }
  return db_->Exec("COMMIT");
}

absl::StatusOr<std::vector<StepRecord>> EmbeddedStore::ListSteps(uint64_t process_id) {
  std::lock_guard lock(mu_);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare(
      "SELECT number, start_ns, end_ns, source FROM steps WHERE process_id = ? ORDER BY number");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, static_cast<int64_t>(process_id));
  std::vector<StepRecord> out;
  absl::StatusOr<bool> row = (*q)->Step();
  for (; row.ok() && *row; row = (*q)->Step()) {
    out.push_back({process_id, (*q)->Int(0), (*q)->Int(1), (*q)->Int(2), (*q)->Text(3)});
  }
  if (!row.ok()) return row.status();
  return out;
}

absl::Status EmbeddedStore::ReplaceSteps(uint64_t process_id, const std::vector<StepRecord>& steps) {
  std::lock_guard lock(mu_);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> del = db_->Prepare("DELETE FROM steps WHERE process_id = ?");
  if (!del.ok()) return del.status();
  absl::StatusOr<std::unique_ptr<SqliteStatement>> ins = db_->Prepare(
      "INSERT OR REPLACE INTO steps(process_id, number, start_ns, end_ns, source) VALUES(?,?,?,?,?)");
  if (!ins.ok()) return ins.status();
  RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  (*del)->Bind(1, static_cast<int64_t>(process_id));
  absl::Status st = (*del)->Run();
  for (size_t i = 0; st.ok() && i < steps.size(); ++i) {
    const StepRecord& s = steps[i];
    (*ins)->Bind(1, static_cast<int64_t>(process_id)).Bind(2, s.number).Bind(3, s.start_ns)
        .Bind(4, s.end_ns).Bind(5, s.source);
    st = (*ins)->Run();
  }
  if (st.ok()) st = db_->Exec("COMMIT");
  if (!st.ok()) (void)db_->Exec("ROLLBACK");
  return st;
}

}  // namespace gpuspy::collector
