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

// Why the index at `path` (in `data_dir`) could not be opened, said so that it can be acted on:
// a damaged file points to --rebuild-index, a full disk says it is full (SQLite says "file is not
// a database" and "disk I/O error"). Other errors are returned as they are.
absl::Status ExplainIndexOpenError(const absl::Status& st, const std::string& path,
                                   const std::string& data_dir);

}  // namespace gpuspy::collector
