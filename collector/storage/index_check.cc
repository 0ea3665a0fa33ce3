#include "collector/storage/index_check.h"

#include "absl/strings/str_cat.h"

namespace gpuspy::collector {
namespace {

// One complaint names the damage well enough; listing them all can take as long as the check.
constexpr char kQuickCheck[] = "PRAGMA quick_check(1)";

absl::Status Damaged(const std::string& path, absl::string_view why) {
  return absl::DataLossError(absl::StrCat(
      "the index ", path, " is damaged (", why, "); gpuspyd will not start on it. Rebuild it "
      "from the segments with: gpuspyd --rebuild-index --data-dir <this data dir>"));
}

}  // namespace

absl::Status CheckIndex(SqliteDb& db, const std::string& path) {
  absl::StatusOr<std::unique_ptr<SqliteStatement>> check = db.Prepare(kQuickCheck);
  if (!check.ok()) return Damaged(path, check.status().message());
  absl::StatusOr<bool> row = (*check)->Step();
  if (!row.ok()) return Damaged(path, row.status().message());
  const std::string verdict = *row ? (*check)->Text(0) : "quick_check returned nothing";
  if (verdict != "ok") return Damaged(path, verdict);
  return absl::OkStatus();
}

}  // namespace gpuspy::collector
