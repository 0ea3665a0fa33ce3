// The embedded index checked on open. Damaged pages in index.sqlite (outside damage, a bad disk)
// used to go unnoticed at start, after which every query failed "database disk image is
// malformed" for good; a daemon that cannot answer should say so once, at start, and not run.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "collector/storage/sqlite_db.h"

namespace gpuspy::collector {

// PRAGMA quick_check (reads every page once, O(index size); skips the slow cross-checks of
// integrity_check). DataLoss naming `path` and SQLite's first complaint when damaged.
absl::Status CheckIndex(SqliteDb& db, const std::string& path);

}  // namespace gpuspy::collector
