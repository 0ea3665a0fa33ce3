// The PostgreSQL hub backend of Store (store.h): one database serves the collector of a whole
// cluster, the embedded store stays the single-node default. See README.md for the schema,
// migrations, partitions and retention.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collector/storage/store.h"

namespace gpuspy::collector {

struct PostgresStoreOptions {
  // libpq connection string: "postgresql://user@host:5432/db" or "host=... dbname=...".
  std::string conninfo;
  // Where the tables live; created if missing. One gpuspyd per (database, schema) at a time: the
  // store holds an advisory lock for it, like the embedded store's data dir lock.
  std::string schema = "gpuspy";
  // The newest batches partition is sealed and a new one started past this much payload or this
  // age. Retention drops whole partitions, so these are its granularity.
  uint64_t partition_max_bytes = 1ull << 30;
  int64_t partition_max_age_ns = 6LL * 3600 * 1'000'000'000;
  // zstd the stored payloads (kept raw when that is not smaller); reads handle both.
  bool compress = true;
  // Connections for queries and metadata; batch appends use one more, their own.
  int pool_size = 4;
  int connect_timeout_s = 10;
};

// Connects, takes the schema's advisory lock, applies pending migrations. Unavailable when the
// server cannot be reached (the message names host and port), FailedPrecondition when another
// gpuspyd holds the schema or it was written by a newer gpuspyd.
absl::StatusOr<std::unique_ptr<Store>> OpenPostgresStore(const PostgresStoreOptions& options);

// "PostgreSQL host=... port=... dbname=... user=..." for logs: never the password.
std::string DescribePostgres(const std::string& conninfo);

}  // namespace gpuspy::collector
