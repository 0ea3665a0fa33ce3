// The embedded store's job administration: deleting processes and renaming jobs (`gpuspy jobs
// delete|rename`, `gpuspy import --replace`), a job's own step pattern (`gpuspy jobs
// set-step-pattern`), imports pending until their last batch is in (store.h: CommitImport). Each changes the index only, in one transaction. The step pattern lives in
// the index alone: `--rebuild-index` forgets it (the segments hold no record of it).
//
// Deleted batches stay in their segment files until retention evicts the segment: segments are
// append-only, and rewriting one to drop a process would cost as much as the import it undoes.
// `gpuspyd --rebuild-index` reads the segments, so it brings deleted processes back (README).
// A rename writes each process's identity record again, so a rebuilt index keeps the new name.
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collector/storage/embedded_store.h"
#include "collector/storage/status_macros.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

// Runs `body` inside BEGIN IMMEDIATE .. COMMIT; rolls back on any error.
absl::Status InTransaction(SqliteDb& db, const std::function<absl::Status()>& body) {
  RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  absl::Status st = body();
  if (st.ok()) st = db.Exec("COMMIT");
  if (!st.ok()) (void)db.Exec("ROLLBACK");
  return st;
}

absl::Status RunWithId(SqliteDb& db, const std::string& sql, int64_t id) {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db.Prepare(sql);
  if (!q.ok()) return q.status();
  (*q)->Bind(1, id);
  return (*q)->Run();
}

}  // namespace

absl::Status EmbeddedStore::DeleteProcessRows(uint64_t id, uint64_t* deleted) {
  const int64_t pid = static_cast<int64_t>(id);
  // Sequence 0 rows (identity records) go too: eviction must not carry them forward.
  for (const char* table : {"batches", "dictionary", "steps"}) {
    RETURN_IF_ERROR(RunWithId(*db_, absl::StrCat("DELETE FROM ", table, " WHERE process_id = ?"), pid));
  }
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q =
      db_->Prepare("DELETE FROM processes WHERE process_id = ? RETURNING process_id");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, pid);
  absl::StatusOr<bool> row = (*q)->Step();
  if (!row.ok()) return row.status();
  if (*row) ++*deleted;
  (*q)->Reset();
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> EmbeddedStore::DeleteProcesses(const std::vector<uint64_t>& process_ids) {
  std::lock_guard lock(mu_);
  uint64_t deleted = 0;
  absl::Status st = InTransaction(*db_, [&]() -> absl::Status {
    for (uint64_t id : process_ids) RETURN_IF_ERROR(DeleteProcessRows(id, &deleted));
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return deleted;
}

absl::Status EmbeddedStore::CommitImport(uint64_t process_id) {
  std::lock_guard lock(mu_);
  return RunWithId(*db_, "UPDATE processes SET pending = 0 WHERE process_id = ?", static_cast<int64_t>(process_id));
}

absl::StatusOr<uint64_t> EmbeddedStore::DiscardPendingImport(const std::string& process_key) {
  std::lock_guard lock(mu_);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q =
      db_->Prepare("SELECT process_id FROM processes WHERE process_key = ? AND pending = 1");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, process_key);
  absl::StatusOr<bool> row = (*q)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return 0;
  const uint64_t id = static_cast<uint64_t>((*q)->Int(0));
  (*q)->Reset();
  uint64_t deleted = 0;
  RETURN_IF_ERROR(InTransaction(*db_, [&] { return DeleteProcessRows(id, &deleted); }));
  return deleted;
}

absl::Status EmbeddedStore::DropPendingImports() {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q = db_->Prepare("SELECT process_id FROM processes WHERE pending = 1");
  if (!q.ok()) return q.status();
  std::vector<uint64_t> pending;
  absl::StatusOr<bool> row = (*q)->Step();
  for (; row.ok() && *row; row = (*q)->Step()) pending.push_back(static_cast<uint64_t>((*q)->Int(0)));
  if (!row.ok()) return row.status();
  (*q)->Reset();
  if (pending.empty()) return absl::OkStatus();
  uint64_t deleted = 0;
  RETURN_IF_ERROR(InTransaction(*db_, [&]() -> absl::Status {
    for (uint64_t id : pending) RETURN_IF_ERROR(DeleteProcessRows(id, &deleted));
    return absl::OkStatus();
  }));
  spdlog::warn("storage: dropped {} import(s) left unfinished when the collector stopped", deleted);
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> EmbeddedStore::RenameJob(const std::string& from, const std::string& to) {
  std::lock_guard lock(mu_);
  absl::StatusOr<std::vector<ProcessRecord>> target = QueryProcesses("WHERE job_id = ?", to, 0);
  if (!target.ok()) return target.status();
  if (!target->empty()) return absl::AlreadyExistsError(absl::StrCat("job '", to, "' exists already"));
  absl::StatusOr<std::vector<ProcessRecord>> moving = QueryProcesses("WHERE job_id = ?", from, 0);
  if (!moving.ok()) return moving.status();
  if (moving->empty()) return absl::NotFoundError(absl::StrCat("unknown job '", from, "'"));
  absl::Status st = InTransaction(*db_, [&]() -> absl::Status {
    for (ProcessRecord& p : *moving) {
      p.identity.set_job_id(to);
      std::string blob;
      p.identity.SerializeToString(&blob);
      absl::StatusOr<std::unique_ptr<SqliteStatement>> upd =
          db_->Prepare("UPDATE processes SET job_id = ?, identity = ? WHERE process_id = ?");
      if (!upd.ok()) return upd.status();
      (*upd)->Bind(1, to).BindBlob(2, blob).Bind(3, static_cast<int64_t>(p.process_id));
      RETURN_IF_ERROR((*upd)->Run());
      // A rolled-back rename leaves these records unindexed: dead bytes, like a failed append.
      RETURN_IF_ERROR(WriteIdentityRecord(p.process_id, blob));
    }
    absl::StatusOr<std::unique_ptr<SqliteStatement>> settings =
        db_->Prepare("UPDATE job_settings SET job_id = ? WHERE job_id = ?");
    if (!settings.ok()) return settings.status();
    (*settings)->Bind(1, to).Bind(2, from);
    return (*settings)->Run();
  });
  if (!st.ok()) return st;
  return moving->size();
}

absl::Status EmbeddedStore::SetJobStepPattern(const std::string& job_id, const std::string& pattern) {
  std::lock_guard lock(mu_);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q =
      pattern.empty() ? db_->Prepare("DELETE FROM job_settings WHERE job_id = ?")
                      : db_->Prepare("INSERT OR REPLACE INTO job_settings(job_id, step_pattern) VALUES(?, ?)");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, job_id);
  if (!pattern.empty()) (*q)->Bind(2, pattern);
  return (*q)->Run();
}

absl::StatusOr<std::string> EmbeddedStore::GetJobStepPattern(const std::string& job_id) {
  std::lock_guard lock(mu_);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> q =
      db_->Prepare("SELECT step_pattern FROM job_settings WHERE job_id = ?");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, job_id);
  absl::StatusOr<bool> row = (*q)->Step();
  if (!row.ok()) return row.status();
  return *row ? (*q)->Text(0) : std::string();
}

}  // namespace gpuspy::collector
