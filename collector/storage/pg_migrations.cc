#include "collector/storage/pg_migrations.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {

absl::Status MigratePostgres(PgConnection& conn, std::span<const PgMigration> migrations) {
  if (absl::Status st = conn.Run(
          "CREATE TABLE IF NOT EXISTS schema_migrations(version integer PRIMARY KEY, "
          "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
      !st.ok()) {
    return st;
  }
  absl::StatusOr<PgResult> applied =
      conn.Query("SELECT version, name FROM schema_migrations ORDER BY version");
  if (!applied.ok()) return applied.status();
  std::map<int64_t, std::string> done;
  for (int i = 0; i < applied->rows(); ++i) {
    done[applied->Int(i, 0)] = std::string(applied->Bytes(i, 1));
  }
  const int64_t newest = migrations.empty() ? 0 : migrations.back().version;
  if (!done.empty() && done.rbegin()->first > newest) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the PostgreSQL schema at ", conn.where(), " was written by a newer gpuspyd (schema ",
        done.rbegin()->first, " > ", newest, ")"));
  }
  for (const PgMigration& m : migrations) {
    if (auto it = done.find(m.version); it != done.end()) {
      if (it->second != m.name) {
        spdlog::warn("storage: schema migration {} was applied as '{}', this build calls it '{}'",
                     m.version, it->second, m.name);
      }
      continue;
    }
    absl::Status st = conn.Run("BEGIN");
    if (st.ok()) st = conn.Run(m.sql);
    if (st.ok()) {
      PgParams p;
      p.Int(m.version).Text(m.name);
      st = conn.Query("INSERT INTO schema_migrations(version, name) VALUES($1, $2)", p).status();
    }
    if (st.ok()) st = conn.Run("COMMIT");
    if (!st.ok()) {
      (void)conn.Run("ROLLBACK");
      return absl::Status(st.code(), absl::StrCat("applying schema migration ", m.name, ": ",
                                                  st.message()));
    }
    if (!done.empty()) spdlog::info("storage: PostgreSQL schema migrated to {}", m.name);
  }
  return absl::OkStatus();
}

}  // namespace gpuspy::collector
