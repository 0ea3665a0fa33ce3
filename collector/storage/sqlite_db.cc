#include "collector/storage/sqlite_db.h"

#include "absl/strings/str_cat.h"

namespace gpuspy::collector {

SqliteStatement& SqliteStatement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, const std::string& text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

SqliteStatement& SqliteStatement::BindBlob(int index, const std::string& bytes) {
  sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}

absl::StatusOr<bool> SqliteStatement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const int code = sqlite3_extended_errcode(db_);
  std::string msg = sqlite3_errmsg(db_);
  if (rc == SQLITE_CONSTRAINT) return absl::AlreadyExistsError(msg);
  if (rc == SQLITE_FULL || code == SQLITE_IOERR_WRITE) {
    return absl::ResourceExhaustedError(absl::StrCat("sqlite: ", msg));
  }
  return absl::InternalError(absl::StrCat("sqlite: ", msg));
}

absl::Status SqliteStatement::Run() {
  absl::StatusOr<bool> row = Step();
  while (row.ok() && *row) row = Step();
  Reset();
  return row.status();
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string SqliteStatement::Text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p),
                                                    sqlite3_column_bytes(stmt_, column));
}

std::string SqliteStatement::Blob(int column) const {
  const void* p = sqlite3_column_blob(stmt_, column);
  return p == nullptr ? std::string()
                      : std::string(static_cast<const char*>(p), sqlite3_column_bytes(stmt_, column));
}

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return absl::UnavailableError(absl::StrCat("cannot open ", path, ": ", msg));
  }
  std::unique_ptr<SqliteDb> out(new SqliteDb(db));
  sqlite3_busy_timeout(db, 5000);
  // WAL + synchronous=NORMAL: a committed transaction survives a crash of the collector process
  // (not necessarily a power loss; --fsync=batch covers that for the segments).
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL",
                             "PRAGMA foreign_keys=ON"}) {
    if (absl::Status st = out->Exec(pragma); !st.ok()) return st;
  }
  return out;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

absl::Status SqliteDb::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    msg = absl::StrCat("sqlite: ", msg, " in: ", sql.substr(0, 80));
    // Codes a caller can act on: a damaged file, a full disk (index_check.h says which).
    switch (sqlite3_errcode(db_)) {
      case SQLITE_NOTADB:
      case SQLITE_CORRUPT:
        return absl::DataLossError(msg);
      case SQLITE_FULL:
        return absl::ResourceExhaustedError(msg);
      default:
        return absl::InternalError(msg);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SqliteStatement>> SqliteDb::Prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    return Error("prepare " + sql.substr(0, 80));
  }
  return std::make_unique<SqliteStatement>(db_, stmt);
}

absl::Status SqliteDb::Error(const std::string& what) const {
  return absl::InternalError(absl::StrCat("sqlite ", what, ": ", sqlite3_errmsg(db_)));
}

}  // namespace gpuspy::collector
