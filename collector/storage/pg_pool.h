// A fixed set of PostgreSQL connections shared by threads: Acquire() lends one (waiting while all
// are lent), the lease gives it back. Queries and metadata writes of the PostgreSQL store run on
// these; batch appends have their own connection (pg_batch_writer.h).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/storage/pg_connection.h"

namespace gpuspy::collector {

class PgPool {
 public:
  class Lease {
   public:
    Lease(PgPool* pool, PgConnection* conn) : pool_(pool), conn_(conn) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), conn_(o.conn_) { o.conn_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (conn_ != nullptr) pool_->Release(conn_);
    }
    PgConnection* operator->() const { return conn_; }
    PgConnection& operator*() const { return *conn_; }

   private:
    PgPool* pool_;
    PgConnection* conn_;
  };

  // Opens `size` connections up front, so a wrong conninfo fails at startup, not on first query.
  static absl::StatusOr<std::unique_ptr<PgPool>> Open(const PgConnectOptions& options, int size);
  Lease Acquire();

 private:
  PgPool() = default;
  void Release(PgConnection* conn);

  std::vector<std::unique_ptr<PgConnection>> all_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<PgConnection*> idle_;  // guarded by mu_
};

}  // namespace gpuspy::collector
