// The storage-interface tests run against every Store backend: TEST_P over StoreBackend, with a
// StoreFactory that opens (and reopens) a store of that backend on fresh, private storage -- a
// temp dir for the embedded store, a new database on the shared throwaway server for PostgreSQL.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include "collector/storage/postgres_store.h"
#include "collector/storage/store.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/subprocess.h"

namespace gpuspy::testing {

enum class StoreBackend { kEmbedded, kPostgres };

inline void PrintTo(StoreBackend b, std::ostream* os) {
  *os << (b == StoreBackend::kEmbedded ? "embedded" : "postgres");
}

inline std::string StoreBackendName(const ::testing::TestParamInfo<StoreBackend>& info) {
  return info.param == StoreBackend::kEmbedded ? "Embedded" : "Postgres";
}

class StoreFactory {
 public:
  explicit StoreFactory(StoreBackend backend) : backend_(backend) {}
  ~StoreFactory() {
    if (server_ != nullptr && !database_.empty()) server_->DropDatabase(database_);
  }

  // "" when the backend is ready; otherwise why it cannot run here (the test skips).
  std::string Prepare() {
    if (backend_ == StoreBackend::kEmbedded) return "";
    std::string why;
    server_ = SharedPostgres(&why);
    if (server_ == nullptr) return "PostgreSQL backend skipped: " + why;
    database_ = server_->CreateDatabase(&why);
    if (database_.empty()) return "PostgreSQL backend skipped: CREATE DATABASE failed: " + why;
    return "";
  }

  // segment_bytes: the embedded segment size, the PostgreSQL partition size.
  absl::StatusOr<std::unique_ptr<collector::Store>> TryOpen(uint64_t segment_bytes = 1 << 20) {
    if (backend_ == StoreBackend::kEmbedded) {
      collector::EmbeddedStoreOptions o;
      o.data_dir = dir_.path() + "/data";
      o.segment_max_bytes = segment_bytes;
      return collector::OpenEmbeddedStore(o);
    }
    collector::PostgresStoreOptions o;
    o.conninfo = conninfo();
    o.partition_max_bytes = segment_bytes;
    o.pool_size = 2;
    return collector::OpenPostgresStore(o);
  }

  // What retention by bytes counts, measured from outside the store: the embedded segment files,
  // or the PostgreSQL batch partitions (heap + TOAST + indexes).
  uint64_t SegmentBytes() const {
    if (backend_ == StoreBackend::kEmbedded) {
      uint64_t total = 0;
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(dir_.path() + "/data/segments", ec)) {
        if (e.path().extension() == ".gseg") total += e.file_size(ec);
      }
      return total;
    }
    return std::stoull("0" + server_->QueryValue(
        database_, "SELECT COALESCE(sum(pg_total_relation_size(to_regclass('gpuspy.' || relname))), "
                   "0) FROM gpuspy.batch_partitions"));
  }

  StoreBackend backend() const { return backend_; }
  const std::string& data_dir_parent() const { return dir_.path(); }
  PostgresServer* server() const { return server_; }
  const std::string& database() const { return database_; }
  std::string conninfo() const { return server_ == nullptr ? "" : server_->Conninfo(database_); }

 private:
  StoreBackend backend_;
  TempDir dir_;
  PostgresServer* server_ = nullptr;
  std::string database_;
};

}  // namespace gpuspy::testing
