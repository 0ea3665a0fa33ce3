// One schema migration of a store backend, compiled in from <backend>/migrations/NNN_name.sql by
// gpuspy_sql_migrations (collector/storage/CMakeLists.txt): versions run 1, 2, ... without gaps.
#pragma once

namespace gpuspy::collector {

struct SqlMigration {
  int version;       // NNN of the file name: 1, 2, ... without gaps
  const char* name;  // the file name without .sql, e.g. "001_initial"
  const char* sql;
};

}  // namespace gpuspy::collector
