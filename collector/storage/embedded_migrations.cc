#include "collector/storage/embedded_migrations.h"

#include "absl/strings/str_cat.h"
#include "collector/storage/status_macros.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {

absl::StatusOr<int64_t> MigrateEmbeddedIndex(SqliteDb& db,
                                             std::span<const EmbeddedMigration> migrations) {
  const int64_t newest = migrations.empty() ? 0 : migrations.back().version;
  absl::StatusOr<std::unique_ptr<SqliteStatement>> v = db.Prepare("PRAGMA user_version");
  if (!v.ok()) return v.status();
  absl::StatusOr<bool> row = (*v)->Step();
  if (!row.ok()) return row.status();
  const int64_t version = *row ? (*v)->Int(0) : 0;
  v->reset();
  if (version > newest) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the data dir was written by a newer gpuspyd (schema ", version, " > ", newest, ")"));
  }
  for (int64_t next = version + 1; next <= newest; ++next) {
    RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
    absl::Status st = db.Exec(migrations[next - 1].sql);
    if (st.ok()) st = db.Exec(absl::StrCat("PRAGMA user_version=", next));
    if (st.ok()) st = db.Exec("COMMIT");
    if (!st.ok()) {
      (void)db.Exec("ROLLBACK");
      return absl::InternalError(
          absl::StrCat("migrating the index to schema ", next, ": ", st.message()));
    }
    if (version > 0) spdlog::info("storage: index migrated to schema {}", next);
  }
  return version;
}

}  // namespace gpuspy::collector
