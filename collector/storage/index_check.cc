#include "collector/storage/index_check.h"

#include <sys/statvfs.h>

#include <cstdint>

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

// Bytes an unprivileged writer may still use on the file system holding `dir` (-1: unknown).
int64_t AvailableBytes(const std::string& dir) {
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) != 0) return -1;
  return static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
}

// SQLite needs a few pages for the write-ahead log and its index to open a database at all.
constexpr int64_t kIndexOpenBytes = 1 << 20;

}  // namespace

absl::Status ExplainIndexOpenError(const absl::Status& st, const std::string& path,
                                   const std::string& data_dir) {
  if (st.ok()) return st;
  const int64_t available = AvailableBytes(data_dir);
  if (absl::IsResourceExhausted(st) || (available >= 0 && available < kIndexOpenBytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the disk holding ", data_dir, " is full (", available < 0 ? 0 : available,
        " bytes free): free some space or start gpuspyd with another --data-dir (", st.message(),
        ")"));
  }
  if (absl::IsDataLoss(st)) return Damaged(path, st.message());
  return st;
}

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
