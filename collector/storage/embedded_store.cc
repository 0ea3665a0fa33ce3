// The embedded store's life: opening a data dir (the steps, in order), the active segment (start,
// roll), read descriptors, stats and flush. See embedded_store.h for where the rest lives.
#include "collector/storage/embedded_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "collector/storage/embedded_migrations.h"
#include "collector/storage/index_check.h"
#include "collector/storage/private_files.h"
#include "collector/storage/status_macros.h"

namespace gpuspy::collector {

namespace fs = std::filesystem;

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
  RETURN_IF_ERROR(StartSegment(active_id_ + 1));
  NoteRoll();
  return absl::OkStatus();
}

absl::Status EmbeddedStore::Open() {
  RETURN_IF_ERROR(MakePrivateDirectory(options_.data_dir));
  RETURN_IF_ERROR(MakePrivateDirectory(SegmentDir()));
  RETURN_IF_ERROR(MakeFilesPrivate(SegmentDir()));
  // SQLite creates the database 0644 under umask 022; its -wal and -shm take the database's mode.
  const std::string index_path = options_.data_dir + "/index.sqlite";
  RETURN_IF_ERROR(MakePrivateFile(index_path));
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(index_path);
  if (!db.ok()) return ExplainIndexOpenError(db.status(), index_path, options_.data_dir);
  db_ = std::move(*db);
  RETURN_IF_ERROR(CheckIndex(*db_, index_path));
  absl::StatusOr<int64_t> version = MigrateEmbeddedIndex(*db_, EmbeddedMigrations());
  if (!version.ok()) return version.status();
  fresh_index_ = *version == 0;
  RETURN_IF_ERROR(Recover());
  RETURN_IF_ERROR(DropPendingImports());
  RETURN_IF_ERROR(QuarantineTruncatedSegments());
  return BackfillIdentityRecords();
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

int EmbeddedStore::ReadFd(uint64_t segment_id) {
  if (auto it = read_fds_.find(segment_id); it != read_fds_.end()) return it->second;
  const int fd = open(SegmentPath(segment_id).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) read_fds_[segment_id] = fd;
  return fd;
}

uint64_t EmbeddedStore::IndexBytes() const {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const char* f : {"/index.sqlite", "/index.sqlite-wal"}) {
    const auto size = fs::file_size(options_.data_dir + f, ec);
    if (!ec) bytes += size;
  }
  return bytes;
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
  s.bytes_on_disk += IndexBytes();
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

absl::StatusOr<std::unique_ptr<Store>> OpenEmbeddedStore(const EmbeddedStoreOptions& options) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("no data dir given");
  auto store = std::make_unique<EmbeddedStore>(options);
  if (absl::Status st = store->Open(); !st.ok()) return st;
  return store;
}

}  // namespace gpuspy::collector
