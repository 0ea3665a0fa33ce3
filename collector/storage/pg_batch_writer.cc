#include "collector/storage/pg_batch_writer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "collector/storage/payload_codec.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }

// Parameters per batch in the group statement (the segment id, $1, is shared).
constexpr int kParamsPerBatch = 11;

// SELECT append_batch($1, $2..$12), append_batch($1, $13..$23), ...: one row, one result per batch.
// Each group size is one prepared statement on the writer connection (at most kMaxGroupBatches).
std::string GroupStatement(size_t n) {
  std::string sql = "SELECT ";
  int p = 2;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) sql += ", ";
    absl::StrAppend(&sql, "append_batch($1");
    for (int k = 0; k < kParamsPerBatch; ++k) absl::StrAppend(&sql, ", $", p++);
    sql += ")";
  }
  return sql;
}

}  // namespace

std::string PartitionTableName(int64_t segment_id) {
  return absl::StrFormat("batches_s%010d", segment_id);
}

absl::StatusOr<std::unique_ptr<PgBatchWriter>> PgBatchWriter::Open(
    std::unique_ptr<PgConnection> conn, const PgBatchWriterOptions& options) {
  std::unique_ptr<PgBatchWriter> w(new PgBatchWriter(std::move(conn), options));
  if (absl::Status st = w->LoadActivePartition(); !st.ok()) return st;
  return w;
}

absl::Status PgBatchWriter::LoadActivePartition() {
  std::lock_guard lock(conn_mu_);
  absl::StatusOr<PgResult> r = conn_->Query(
      "SELECT segment_id, created_ns, payload_bytes FROM batch_partitions "
      "ORDER BY segment_id DESC LIMIT 1");
  if (!r.ok()) return r.status();
  if (r->rows() == 0) return Roll(NowNs());
  active_id_ = r->Int(0, 0);
  active_created_ns_ = r->Int(0, 1);
  active_bytes_ = static_cast<uint64_t>(r->Int(0, 2));
  return absl::OkStatus();
}

absl::Status PgBatchWriter::Append(const StoredBatch& batch) {
  Pending me{&batch, std::string(), absl::OkStatus(), false};
  if (options_.compress) {
    me.compressed = CompressPayload(batch.payload);
    if (me.compressed.size() >= batch.payload.size()) me.compressed.clear();
  }
  std::unique_lock lock(queue_mu_);
  queue_.push_back(&me);
  queue_cv_.wait(lock, [&] { return me.done || queue_.front() == &me; });
  if (me.done) return me.status;
  // First in line: take what is queued behind (bounded), write it, hand out the results.
  std::vector<Pending*> group;
  uint64_t bytes = 0;
  for (Pending* p : queue_) {
    if (!group.empty() &&
        (group.size() >= kMaxGroupBatches || bytes + p->stored().size() > kMaxGroupBytes)) {
      break;
    }
    group.push_back(p);
    bytes += p->stored().size();
  }
  lock.unlock();
  {
    std::lock_guard conn_lock(conn_mu_);
    WriteGroup(group);
  }
  lock.lock();
  for (Pending* p : group) {
    queue_.pop_front();  // the group is the front of the queue, in order
    p->done = true;
  }
  lock.unlock();
  queue_cv_.notify_all();
  return me.status;
}

bool PgBatchWriter::ShouldRoll(uint64_t next_record_bytes, int64_t now) const {
  if (active_bytes_ == 0) return false;  // an empty partition takes anything
  if (active_bytes_ + next_record_bytes > options_.partition_max_bytes) return true;
  return options_.partition_max_age_ns > 0 &&
         now - active_created_ns_ >= options_.partition_max_age_ns;
}

void PgBatchWriter::WriteGroup(const std::vector<Pending*>& group) {
  const int64_t now = NowNs();
  size_t i = 0;
  while (i < group.size()) {
    if (ShouldRoll(group[i]->stored().size(), now)) {
      if (absl::Status st = Roll(now); !st.ok()) {
        for (size_t k = i; k < group.size(); ++k) group[k]->status = st;
        write_errors_ += group.size() - i;
        return;
      }
    }
    // As many as fit the active partition (at least one), in one transaction.
    std::vector<Pending*> part;
    uint64_t bytes = 0;
    do {
      bytes += group[i]->stored().size();
      part.push_back(group[i++]);
    } while (i < group.size() &&
             active_bytes_ + bytes + group[i]->stored().size() <= options_.partition_max_bytes);
    WriteInOneTransaction(part, now);
  }
}

void PgBatchWriter::WriteInOneTransaction(const std::vector<Pending*>& items, int64_t now) {
  absl::Status st = TryWrite(items, now);
  if (st.ok()) return;
  (void)conn_->Run("ROLLBACK");
  if (items.size() > 1 && !absl::IsUnavailable(st)) {
    // One bad batch must not fail the others: each on its own.
    for (Pending* p : items) WriteInOneTransaction({p}, now);
    return;
  }
  spdlog::error("storage: storing {} batch(es) failed: {}", items.size(), st.ToString());
  write_errors_ += items.size();
  for (Pending* p : items) p->status = st;
}

absl::Status PgBatchWriter::TryWrite(const std::vector<Pending*>& items, int64_t now) {
  PgParams params;
  params.Int(active_id_);
  for (const Pending* p : items) {
    const StoredBatch& b = *p->batch;
    params.Int(static_cast<int64_t>(b.process_id))
        .Int(static_cast<int64_t>(b.sequence))
        .Int(b.min_ns)
        .Int(b.max_ns)
        .Int(static_cast<int64_t>(b.event_count))
        .Int(static_cast<int64_t>(b.loss.cupti_dropped_records))
        .Int(static_cast<int64_t>(b.loss.queue_dropped_events))
        .Int(static_cast<int64_t>(b.loss.spill_dropped_events))
        .Int(now)
        .Bytes(p->stored())
        .Bool(!p->compressed.empty());
  }
  if (absl::Status st = conn_->Run("BEGIN"); !st.ok()) return st;
  absl::StatusOr<PgResult> r = conn_->Query(GroupStatement(items.size()), params);
  if (!r.ok()) return r.status();
  if (r->rows() != 1 || r->columns() != static_cast<int>(items.size())) {
    return absl::InternalError("append_batch returned an unexpected shape");
  }
  uint64_t stored_bytes = 0;
  std::vector<absl::Status> results;
  for (size_t i = 0; i < items.size(); ++i) {
    const StoredBatch& b = *items[i]->batch;
    switch (r->Int(0, static_cast<int>(i))) {
      case 0:
        stored_bytes += items[i]->stored().size();
        results.push_back(absl::OkStatus());
        break;
      case 1:
        results.push_back(absl::NotFoundError(absl::StrCat("no process ", b.process_id)));
        break;
      case 2:
        results.push_back(absl::AlreadyExistsError(
            absl::StrCat("process ", b.process_id, " batch ", b.sequence, " is already stored")));
        break;
      default:
        return absl::InternalError("append_batch returned an unknown result");
    }
  }
  // The partition's catalog row travels in the same transaction as its batches.
  std::string finish = "COMMIT";
  if (stored_bytes > 0) {
    finish = absl::StrCat("UPDATE batch_partitions SET payload_bytes = payload_bytes + ",
                          stored_bytes, ", last_write_ns = GREATEST(last_write_ns, ", now,
                          ") WHERE segment_id = ", active_id_, "; COMMIT");
  }
  if (absl::Status st = conn_->Run(finish); !st.ok()) return st;
  active_bytes_ += stored_bytes;
  for (size_t i = 0; i < items.size(); ++i) items[i]->status = results[i];
  return absl::OkStatus();
}

absl::Status PgBatchWriter::Roll(int64_t now) {
  const int64_t id = active_id_ + 1;
  const std::string table = PartitionTableName(id);
  absl::Status st = conn_->Run("BEGIN");
  if (st.ok()) {
    st = conn_->Run(absl::StrCat("CREATE TABLE ", PgQuoteIdentifier(table),
                                 " PARTITION OF batches FOR VALUES IN (", id, ")"));
  }
  if (st.ok()) {
    PgParams p;
    p.Int(id).Text(table).Int(now);
    st = conn_->Query("INSERT INTO batch_partitions(segment_id, relname, created_ns, last_write_ns) "
                      "VALUES($1, $2, $3, $3)",
                      p)
             .status();
  }
  if (st.ok()) st = conn_->Run("COMMIT");
  if (!st.ok()) {
    (void)conn_->Run("ROLLBACK");
    return absl::Status(st.code(), absl::StrCat("starting partition ", table, ": ", st.message()));
  }
  active_id_ = id;
  active_bytes_ = 0;
  active_created_ns_ = now;
  if (options_.on_roll) options_.on_roll();
  return absl::OkStatus();
}

absl::Status PgBatchWriter::Flush() {
  std::lock_guard lock(conn_mu_);
  // A commit that wrote nothing flushes nothing: touch the active partition's catalog row.
  PgParams p;
  p.Int(active_id_);
  return conn_->Query("UPDATE batch_partitions SET last_write_ns = last_write_ns WHERE segment_id = $1", p)
      .status();
}

absl::Status PgBatchWriter::DropPartition(int64_t segment_id, const std::string& relname) {
  // Table and catalog row go together (DDL is transactional): nothing to reconcile after a crash.
  // So do the counts: a process's event_count is what is stored of it (gpuspy jobs), and its
  // steps that end before its oldest remaining batch go (all of them when none is left);
  // batch_count and max_sequence keep every batch ever stored, so eviction is no gap.
  absl::Status st = conn_->Run("BEGIN");
  std::vector<int64_t> processes;
  if (st.ok()) {
    absl::StatusOr<PgResult> r = conn_->Query(absl::StrCat(
        "UPDATE processes p SET event_count = GREATEST(p.event_count - d.events, 0) FROM "
        "(SELECT process_id, SUM(event_count) AS events FROM ", PgQuoteIdentifier(relname),
        " GROUP BY process_id) d WHERE p.process_id = d.process_id RETURNING p.process_id"));
    st = r.status();
    for (int i = 0; st.ok() && i < r->rows(); ++i) processes.push_back(r->Int(i, 0));
  }
  if (st.ok()) st = conn_->Run(absl::StrCat("DROP TABLE IF EXISTS ", PgQuoteIdentifier(relname)));
  if (st.ok()) {
    PgParams p;
    p.Int(segment_id);
    st = conn_->Query("DELETE FROM batch_partitions WHERE segment_id = $1", p).status();
  }
  if (st.ok() && !processes.empty()) {
    PgParams p;
    p.IntArray(processes);
    st = conn_->Query(
                  "DELETE FROM steps s USING (SELECT id, (SELECT MIN(b.min_ns) FROM batches b "
                  "WHERE b.process_id = id) AS oldest_ns FROM unnest($1::bigint[]) AS id) o "
                  "WHERE s.process_id = o.id AND (o.oldest_ns IS NULL OR s.end_ns < o.oldest_ns)",
                  p)
             .status();
  }
  if (st.ok()) st = conn_->Run("COMMIT");
  if (!st.ok()) {
    (void)conn_->Run("ROLLBACK");
    return absl::Status(st.code(), absl::StrCat("dropping partition ", relname, ": ", st.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> PgBatchWriter::EnforceRetention(const RetentionPolicy& policy,
                                                         int64_t now) {
  std::lock_guard lock(conn_mu_);
  struct Partition {
    int64_t id;
    std::string relname;
    int64_t last_write_ns;
    uint64_t bytes;  // on disk: heap + TOAST + indexes
  };
  std::vector<Partition> parts;
  uint64_t total = 0;
  {
    absl::StatusOr<PgResult> r = conn_->Query(
        "SELECT segment_id, relname, last_write_ns, "
        "COALESCE(pg_total_relation_size(to_regclass(relname)), 0) "
        "FROM batch_partitions ORDER BY segment_id");
    if (!r.ok()) return r.status();
    for (int i = 0; i < r->rows(); ++i) {
      parts.push_back({r->Int(i, 0), std::string(r->Bytes(i, 1)), r->Int(i, 2),
                       static_cast<uint64_t>(r->Int(i, 3))});
      total += parts.back().bytes;
    }
  }
  // As in the embedded store: the active partition is never dropped for size (it holds the newest
  // data and is bounded by partition_max_bytes), but once it has been idle past max_age everything
  // in it is expired: a fresh partition takes over and it goes with the others.
  const bool active_expired = policy.max_age_ns > 0 && active_bytes_ > 0 && !parts.empty() &&
                              parts.back().id == active_id_ &&
                              parts.back().last_write_ns < now - policy.max_age_ns;
  if (active_expired) {
    if (absl::Status st = Roll(NowNs()); !st.ok()) return st;
  }
  uint64_t dropped = 0;
  for (const Partition& p : parts) {
    if (p.id == active_id_) break;
    const bool too_big = policy.max_bytes > 0 && total > policy.max_bytes;
    const bool too_old = policy.max_age_ns > 0 && p.last_write_ns < now - policy.max_age_ns;
    if (!too_big && !too_old) break;  // oldest first: once one stays, all newer stay
    if (absl::Status st = DropPartition(p.id, p.relname); !st.ok()) return st;
    total -= p.bytes;
    ++dropped;
    ++partitions_dropped_;
  }
  return dropped;
}

}  // namespace gpuspy::collector
