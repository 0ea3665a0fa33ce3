// The PostgreSQL store's write path for batches: one connection, group commit, time/size
// partitions, retention.
//
// Group commit: AppendBatch calls from concurrent ingest streams queue up (each compresses its
// payload first, in its own thread); the first in line writes everything queued behind it (up to kMaxGroupBatches / kMaxGroupBytes) as one statement in
// one transaction and wakes the others with their own results. One commit (one WAL flush) then
// acknowledges many batches: with N producers streaming, the cost of durability is shared.
//
// Partitions: `batches` is partitioned by LIST (segment_id). Writing goes to the newest partition;
// a new one starts when the newest holds partition_max_bytes of payload or is older than
// partition_max_age_ns, so each partition covers a contiguous stretch of arrival time and
// retention drops whole partitions (DROP TABLE: no DELETE, no vacuum debt), oldest first.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collector/storage/pg_connection.h"
#include "collector/storage/store.h"

namespace gpuspy::collector {

struct PgBatchWriterOptions {
  uint64_t partition_max_bytes = 1ull << 30;  // of stored (compressed) payload
  int64_t partition_max_age_ns = 0;  // 0 = partitions roll by size only
  bool compress = true;              // zstd payloads at rest (kept raw when that is not smaller)
  // After a new partition started (Store::set_roll_observer); conn_mu_ held: it must only signal.
  std::function<void()> on_roll;
};

class PgBatchWriter {
 public:
  static constexpr size_t kMaxGroupBatches = 64;
  static constexpr uint64_t kMaxGroupBytes = 16ull << 20;

  // `conn` is migrated already and holds the store's advisory lock.
  static absl::StatusOr<std::unique_ptr<PgBatchWriter>> Open(std::unique_ptr<PgConnection> conn,
                                                             const PgBatchWriterOptions& options);

  // Store::AppendBatch: OK once committed, AlreadyExists, NotFound (no such process), or the
  // server's error (Unavailable when it cannot be reached: the sender retries, and a batch that
  // was in fact committed then comes back as AlreadyExists).
  absl::Status Append(const StoredBatch& batch);
  // Store::EnforceRetention: whole partitions, oldest first; returns partitions dropped.
  absl::StatusOr<uint64_t> EnforceRetention(const RetentionPolicy& policy, int64_t now_unix_ns);

  // A synchronous commit on the writer connection: the WAL is flushed up to here, so everything
  // committed before on any connection (synchronous or not) is durable.
  absl::Status Flush();

  uint64_t write_errors() const { return write_errors_.load(); }
  uint64_t partitions_dropped() const { return partitions_dropped_.load(); }

 private:
  struct Pending {
    const StoredBatch* batch;
    std::string compressed;  // the zstd payload, when smaller than the wire form
    const std::string& stored() const { return compressed.empty() ? batch->payload : compressed; }
    absl::Status status;
    bool done = false;
  };

  PgBatchWriter(std::unique_ptr<PgConnection> conn, const PgBatchWriterOptions& options)
      : conn_(std::move(conn)), options_(options) {}
  absl::Status LoadActivePartition();
  // Everything below runs with conn_mu_ held.
  void WriteGroup(const std::vector<Pending*>& group);
  void WriteInOneTransaction(const std::vector<Pending*>& items, int64_t now);
  absl::Status TryWrite(const std::vector<Pending*>& items, int64_t now);
  bool ShouldRoll(uint64_t next_record_bytes, int64_t now) const;
  absl::Status Roll(int64_t now);
  absl::Status DropPartition(int64_t segment_id, const std::string& relname);

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Pending*> queue_;  // guarded by queue_mu_; the front one is writing

  std::mutex conn_mu_;  // the connection and the active partition's state
  std::unique_ptr<PgConnection> conn_;
  PgBatchWriterOptions options_;
  int64_t active_id_ = 0;
  uint64_t active_bytes_ = 0;       // payload bytes stored in the active partition
  int64_t active_created_ns_ = 0;

  std::atomic<uint64_t> write_errors_{0};
  std::atomic<uint64_t> partitions_dropped_{0};
};

// "batches_s0000000042": the table of partition 42.
std::string PartitionTableName(int64_t segment_id);

}  // namespace gpuspy::collector
