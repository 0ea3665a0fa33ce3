#include "collector/storage/pg_pool.h"

#include <algorithm>

namespace gpuspy::collector {

absl::StatusOr<std::unique_ptr<PgPool>> PgPool::Open(const PgConnectOptions& options, int size) {
  std::unique_ptr<PgPool> pool(new PgPool());
  for (int i = 0; i < std::max(size, 1); ++i) {
    absl::StatusOr<std::unique_ptr<PgConnection>> c = PgConnection::Connect(options);
    if (!c.ok()) return c.status();
    pool->idle_.push_back(c->get());
    pool->all_.push_back(std::move(*c));
  }
  return pool;
}

PgPool::Lease PgPool::Acquire() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return !idle_.empty(); });
  PgConnection* c = idle_.back();
  idle_.pop_back();
  return Lease(this, c);
}

void PgPool::Release(PgConnection* conn) {
  {
    std::lock_guard lock(mu_);
    idle_.push_back(conn);
  }
  cv_.notify_one();
}

}  // namespace gpuspy::collector
