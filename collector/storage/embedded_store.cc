// The embedded Store: batches in append-only segment files under <data_dir>/segments, indexed
// (with processes, dictionaries and steps) in <data_dir>/index.sqlite.
//
// Why not events as SQLite rows: a busy job produces 100k+ events/s; a row per event costs
// ~50-100 B and an index update each, while a stored batch costs ~10 B/event and one row per
// ~4k events. Queries read whole batches for a time window, which is what analysis needs.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "collector/storage/index_check.h"
#include "collector/storage/payload_codec.h"
#include "collector/storage/private_files.h"
#include "collector/storage/segment_file.h"
#include "collector/storage/segment_quarantine.h"
#include "collector/storage/sqlite_db.h"
#include "collector/storage/store.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

namespace fs = std::filesystem;

// Schema history. Each step runs in one transaction with its PRAGMA user_version bump, so a data
// dir is always at exactly one version; an older dir is brought forward step by step on open.
constexpr int kSchemaVersion = 4;

// v1: the original layout.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE IF NOT EXISTS processes(
  process_id INTEGER PRIMARY KEY AUTOINCREMENT,
  process_key TEXT UNIQUE NOT NULL,
  job_id TEXT NOT NULL,
  identity BLOB NOT NULL,
  first_seen INTEGER NOT NULL,
  last_seen INTEGER NOT NULL,
  event_count INTEGER NOT NULL DEFAULT 0,
  batch_count INTEGER NOT NULL DEFAULT 0,
  max_sequence INTEGER NOT NULL DEFAULT 0,
  cupti_dropped INTEGER NOT NULL DEFAULT 0,
  queue_dropped INTEGER NOT NULL DEFAULT 0,
  spill_dropped INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS processes_by_job ON processes(job_id);
CREATE TABLE IF NOT EXISTS dictionary(
  chunk INTEGER PRIMARY KEY AUTOINCREMENT,
  process_id INTEGER NOT NULL,
  defs BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS dictionary_by_process ON dictionary(process_id, chunk);
CREATE TABLE IF NOT EXISTS segments(
  segment_id INTEGER PRIMARY KEY,
  bytes INTEGER NOT NULL,
  created INTEGER NOT NULL,
  last_write INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS batches(
  process_id INTEGER NOT NULL,
  sequence INTEGER NOT NULL,
  min_ns INTEGER NOT NULL,
  max_ns INTEGER NOT NULL,
  event_count INTEGER NOT NULL,
  segment_id INTEGER NOT NULL,
  offset INTEGER NOT NULL,
  length INTEGER NOT NULL,
  PRIMARY KEY(process_id, sequence)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS batches_by_time ON batches(process_id, max_ns);
CREATE INDEX IF NOT EXISTS batches_by_segment ON batches(segment_id);
CREATE TABLE IF NOT EXISTS steps(
  process_id INTEGER NOT NULL,
  number INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL,
  source TEXT NOT NULL,
  PRIMARY KEY(process_id, number)) WITHOUT ROWID;
)sql";

// v2: segments record their file (relative to the data dir) and whether they are sealed (no
// longer written; every segment but the newest).
constexpr char kSchemaV2[] = R"sql(
ALTER TABLE segments ADD COLUMN path TEXT NOT NULL DEFAULT '';
ALTER TABLE segments ADD COLUMN sealed INTEGER NOT NULL DEFAULT 0;
UPDATE segments SET path = printf('segments/seg-%08d.gseg', segment_id);
UPDATE segments SET sealed = 1 WHERE segment_id < (SELECT MAX(segment_id) FROM segments);
)sql";

// v3: each batch's loss counters, so the report can say which steps a process's drops fall into
// without reading payloads (rows from before stay 0: their drops are reported per process).
constexpr char kSchemaV3[] = R"sql(
ALTER TABLE batches ADD COLUMN cupti_dropped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batches ADD COLUMN queue_dropped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batches ADD COLUMN spill_dropped INTEGER NOT NULL DEFAULT 0;
)sql";

// v4: identity records (segment_file.h): rows with sequence 0 in `batches`. No table changes;
// the version is what matters: an older gpuspyd would read those rows as batches, and now refuses
// the data dir as written by a newer one instead.
constexpr char kSchemaV4[] = "-- identity records: batches rows with sequence 0";

constexpr const char* kMigrations[] = {kSchemaV1, kSchemaV2, kSchemaV3, kSchemaV4};
static_assert(std::size(kMigrations) == kSchemaVersion);

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }

#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    if (absl::Status _st = (expr); !_st.ok()) { \
      return _st;                              \
    }                                          \
  } while (0)

class EmbeddedStore final : public Store {
 public:
  explicit EmbeddedStore(EmbeddedStoreOptions options) : options_(std::move(options)) {}
  ~EmbeddedStore() override {
    for (auto& [id, fd] : read_fds_) close(fd);
  }

  absl::Status Open();

  absl::StatusOr<uint64_t> UpsertProcess(const v1::ProcessIdentity& identity,
                                         int64_t now_unix_ns) override;
  absl::StatusOr<ProcessRecord> GetProcess(uint64_t process_id) override;
  absl::StatusOr<std::vector<ProcessRecord>> ListProcesses(const std::string& job_id) override;
  absl::Status AppendDictionary(uint64_t process_id, const v1::Dictionary& defs) override;
  absl::StatusOr<v1::Dictionary> LoadDictionary(uint64_t process_id) override;
  absl::Status AppendBatch(const StoredBatch& batch) override;
  absl::StatusOr<std::vector<StoredBatch>> ReadBatches(uint64_t process_id, int64_t from_ns,
                                                       int64_t to_ns) override;
  absl::StatusOr<std::vector<StoredBatch>> ReadBatchesAfter(uint64_t process_id,
                                                            uint64_t after_sequence,
                                                            size_t limit) override;
  absl::StatusOr<std::vector<BatchMark>> ListBatchMarks(uint64_t process_id) override;
  absl::Status UpsertSteps(const std::vector<StepRecord>& steps) override;
  absl::StatusOr<std::vector<StepRecord>> ListSteps(uint64_t process_id) override;
  absl::StatusOr<uint64_t> EnforceRetention(const RetentionPolicy& policy,
                                            int64_t now_unix_ns) override;
  StoreStats Stats() override;
  absl::Status Flush() override;

 private:
  static std::string SegmentName(uint64_t id) { return absl::StrFormat("seg-%08d.gseg", id); }
  std::string SegmentDir() const { return options_.data_dir + "/segments"; }
  std::string SegmentPath(uint64_t id) const { return SegmentDir() + "/" + SegmentName(id); }
  absl::Status Migrate();
  absl::Status Recover();
  absl::Status StartSegment(uint64_t id);
  // Seals the active segment (synced, so Flush() need only sync the active one) and starts the
  // next one.
  absl::Status RollSegment();
  absl::Status RemoveOrphanSegments();
  // Sealed segments shorter than their index says (cut by outside damage, or a power loss
  // without --fsync=batch) are quarantined on open.
  absl::Status QuarantineTruncatedSegments();
  // Copies the readable records of segment `id` to the active segment, forgets the others, and
  // moves the file to segments/quarantine/ (segment_quarantine.h). mu_ held (or opening).
  absl::Status QuarantineSegment(uint64_t id, const std::string& why);
  // The index's records in segment `id`, by offset; only the identity records (sequence 0) when
  // `identities_only`. mu_ held (or opening).
  absl::StatusOr<std::vector<IndexedRecord>> RecordsOf(uint64_t id, bool identities_only);
  absl::Status EvictSegment(uint64_t id);
  absl::Status WriteIdentityRecord(uint64_t process_id, const std::string& blob);  // mu_ held
  absl::Status BackfillIdentityRecords();
  absl::Status NoteActiveBytes();
  // Copies the identity records in segment `id` to the active segment (before its eviction).
  absl::Status CarryIdentityRecords(uint64_t id);
  // Whether segment `id` holds any batch (identity records alone are not data to age out).
  absl::StatusOr<bool> HoldsBatches(uint64_t id);
  absl::StatusOr<std::vector<ProcessRecord>> QueryProcesses(const std::string& where,
                                                            const std::string& arg, int64_t id);
  int ReadFd(uint64_t segment_id);
  // Reads the batches a prepared SELECT of (sequence, min_ns, max_ns, event_count, segment_id,
  // offset, length) yields; records failing their checks are skipped and counted. mu_ held.
  absl::StatusOr<std::vector<StoredBatch>> ReadRowsLocked(uint64_t process_id, SqliteStatement& query);

  EmbeddedStoreOptions options_;
  std::mutex mu_;  // guards everything below
  std::unique_ptr<SqliteDb> db_;
  std::unique_ptr<SegmentWriter> active_;
  uint64_t active_id_ = 0;
  bool fresh_index_ = false;  // the index was created by this Open (user_version was 0)
  std::map<uint64_t, int> read_fds_;
  uint64_t carried_bytes_ = 0;  // identity records copied forward by evictions (retention's sum)
  StoreStats stats_;
};

absl::Status EmbeddedStore::Migrate() {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> v = db_->Prepare("PRAGMA user_version");
  if (!v.ok()) return v.status();
  absl::StatusOr<bool> row = (*v)->Step();
  if (!row.ok()) return row.status();
  const int64_t version = *row ? (*v)->Int(0) : 0;
  v->reset();
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the data dir was written by a newer gpuspyd (schema ", version, " > ", kSchemaVersion, ")"));
  }
  fresh_index_ = version == 0;
  for (int64_t next = version + 1; next <= kSchemaVersion; ++next) {
    RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
    absl::Status st = db_->Exec(kMigrations[next - 1]);
    if (st.ok()) st = db_->Exec(absl::StrCat("PRAGMA user_version=", next));
    if (st.ok()) st = db_->Exec("COMMIT");
    if (!st.ok()) {
      (void)db_->Exec("ROLLBACK");
      return absl::InternalError(
          absl::StrCat("migrating the index to schema ", next, ": ", st.message()));
    }
    if (version > 0) spdlog::info("storage: index migrated to schema {}", next);
  }
  return absl::OkStatus();
}

absl::Status EmbeddedStore::StartSegment(uint64_t id) {
  const bool existed = fs::exists(SegmentPath(id));
  absl::StatusOr<std::unique_ptr<SegmentWriter>> w = SegmentWriter::Open(SegmentPath(id));
  if (!w.ok()) return w.status();
  // A new file's directory entry must be durable before anything in it is acknowledged.
  if (!existed) RETURN_IF_ERROR(SyncDirectory(SegmentDir()));
  absl::StatusOr<std::unique_ptr<SqliteStatement>> ins = db_->Prepare(
      "INSERT OR IGNORE INTO segments(segment_id, path, bytes, created, last_write, sealed) "
      "VALUES(?,?,?,?,?,0)");
  if (!ins.ok()) return ins.status();
  const int64_t now = NowNs();
  (*ins)->Bind(1, static_cast<int64_t>(id)).Bind(2, "segments/" + SegmentName(id))
      .Bind(3, static_cast<int64_t>((*w)->size())).Bind(4, now).Bind(5, now);
  RETURN_IF_ERROR((*ins)->Run());
  active_ = std::move(*w);
  active_id_ = id;
  return absl::OkStatus();
}

absl::Status EmbeddedStore::RollSegment() {
  RETURN_IF_ERROR(active_->Sync());
  absl::StatusOr<std::unique_ptr<SqliteStatement>> seal =
      db_->Prepare("UPDATE segments SET sealed = 1, bytes = ? WHERE segment_id = ?");
  if (!seal.ok()) return seal.status();
  (*seal)->Bind(1, static_cast<int64_t>(active_->size())).Bind(2, static_cast<int64_t>(active_id_));
  RETURN_IF_ERROR((*seal)->Run());
  return StartSegment(active_id_ + 1);
}

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

absl::Status EmbeddedStore::Open() {
  RETURN_IF_ERROR(MakePrivateDirectory(options_.data_dir));
  RETURN_IF_ERROR(MakePrivateDirectory(SegmentDir()));
  // SQLite creates the database 0644 under umask 022; its -wal and -shm take the database's mode.
  const std::string index_path = options_.data_dir + "/index.sqlite";
  RETURN_IF_ERROR(MakePrivateFile(index_path));
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(index_path);
  if (!db.ok()) return db.status();
  db_ = std::move(*db);
  RETURN_IF_ERROR(CheckIndex(*db_, index_path));
  RETURN_IF_ERROR(Migrate());
  RETURN_IF_ERROR(Recover());
  RETURN_IF_ERROR(QuarantineTruncatedSegments());
  return BackfillIdentityRecords();
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
    st = run("DELETE FROM batches WHERE process_id = ? AND sequence = ?",
             {static_cast<int64_t>(r.process_id), static_cast<int64_t>(r.sequence)});
    if (st.ok() && r.sequence != kIdentityRecordSequence) {  // a lost identity is backfilled on open
      st = run("UPDATE processes SET batch_count = MAX(batch_count - 1, 0) WHERE process_id = ?",
               {static_cast<int64_t>(r.process_id)});
    }
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
      "INSERT INTO processes(process_key, job_id, identity, first_seen, last_seen) "
      "VALUES(?,?,?,?,?)");
  if (!ins.ok()) return ins.status();
  (*ins)->Bind(1, identity.process_key()).Bind(2, identity.job_id()).BindBlob(3, blob)
      .Bind(4, now).Bind(5, now);
  RETURN_IF_ERROR((*ins)->Run());
  const uint64_t id = static_cast<uint64_t>(db_->LastInsertId());
  RETURN_IF_ERROR(WriteIdentityRecord(id, blob));
  return id;
}

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

// segments.bytes of the active segment after a write that is not a batch (last_write, which
// retention ages by, stays: an identity is not new data).
absl::Status EmbeddedStore::NoteActiveBytes() {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> upd =
      db_->Prepare("UPDATE segments SET bytes = ? WHERE segment_id = ?");
  if (!upd.ok()) return upd.status();
  (*upd)->Bind(1, static_cast<int64_t>(active_->size())).Bind(2, static_cast<int64_t>(active_id_));
  return (*upd)->Run();
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
  if (!missing.empty()) spdlog::info("storage: identity records written for {} process(es)", missing.size());
  return absl::OkStatus();
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
  if (job_id.empty()) return QueryProcesses("", "", 0);
  return QueryProcesses("WHERE job_id = ?", job_id, 0);
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
  {
    absl::StatusOr<std::unique_ptr<SqliteStatement>> check = db_->Prepare(
        "SELECT EXISTS(SELECT 1 FROM processes WHERE process_id = ?1), "
        "EXISTS(SELECT 1 FROM batches WHERE process_id = ?1 AND sequence = ?2)");
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
  }
  // At rest the batch is zstd'ed unless that does not make it smaller.
  std::string compressed = options_.compress ? CompressPayload(b.payload) : std::string();
  const bool zstd = !compressed.empty() && compressed.size() < b.payload.size();
  const std::string& stored = zstd ? compressed : b.payload;
  const uint64_t record = kSegmentHeaderBytes + stored.size();
  if (active_->size() > 0 && active_->size() + record > options_.segment_max_bytes) {
    if (absl::Status st = RollSegment(); !st.ok()) {
      ++stats_.write_errors;
      return st;
    }
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

int EmbeddedStore::ReadFd(uint64_t segment_id) {
  if (auto it = read_fds_.find(segment_id); it != read_fds_.end()) return it->second;
  const int fd = open(SegmentPath(segment_id).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) read_fds_[segment_id] = fd;
  return fd;
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

absl::Status EmbeddedStore::EvictSegment(uint64_t id) {
  if (fs::exists(SegmentPath(id))) RETURN_IF_ERROR(CarryIdentityRecords(id));
  if (auto it = read_fds_.find(id); it != read_fds_.end()) {
    close(it->second);
    read_fds_.erase(it);
  }
  // Index first, file second: a crash in between leaves an orphan file, removed on the next open.
  RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  for (const char* sql : {"DELETE FROM batches WHERE segment_id = ?",
                          "DELETE FROM segments WHERE segment_id = ?"}) {
    absl::StatusOr<std::unique_ptr<SqliteStatement>> del = db_->Prepare(sql);
    absl::Status st = del.status();
    if (st.ok()) {
      (*del)->Bind(1, static_cast<int64_t>(id));
      st = (*del)->Run();
    }
    if (!st.ok()) {
      (void)db_->Exec("ROLLBACK");
      return st;
    }
  }
  RETURN_IF_ERROR(db_->Exec("COMMIT"));
  std::error_code ec;
  fs::remove(SegmentPath(id), ec);
  if (ec) spdlog::warn("storage: cannot remove {}: {}", SegmentPath(id), ec.message());
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

StoreStats EmbeddedStore::Stats() {
  std::lock_guard lock(mu_);
  StoreStats s = stats_;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(SegmentDir(), ec)) {
    if (entry.path().extension() != ".gseg") continue;
    const auto size = entry.file_size(ec);
    if (ec) continue;  // evicted under us? (not while we hold mu_, but be safe)
    s.bytes_on_disk += size;
    ++s.segments;
  }
  for (const char* f : {"/index.sqlite", "/index.sqlite-wal"}) {
    const auto size = fs::file_size(options_.data_dir + f, ec);
    if (!ec) s.bytes_on_disk += size;
  }
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare("SELECT COUNT(*) FROM batches WHERE sequence > 0");
  if (q.ok()) {
    absl::StatusOr<bool> row = (*q)->Step();
    if (row.ok() && *row) s.batches = static_cast<uint64_t>((*q)->Int(0));
  }
  return s;
}

absl::Status EmbeddedStore::Flush() {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(active_->Sync());
  return db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> OpenEmbeddedStore(const EmbeddedStoreOptions& options) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("no data dir given");
  auto store = std::make_unique<EmbeddedStore>(options);
  if (absl::Status st = store->Open(); !st.ok()) return st;
  return store;
}

}  // namespace gpuspy::collector
