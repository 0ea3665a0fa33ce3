// The PostgreSQL Store: metadata and queries on a small connection pool, batch appends and
// retention through PgBatchWriter (its own connection, group commit, partitions).
//
// Durability: AppendBatch returns OK only after its transaction committed, so an acknowledged
// batch survives a crash of the collector and, with the server's default synchronous_commit=on,
// of the database server too (metadata: see Open). Flush() makes every earlier commit durable.
#include "collector/storage/postgres_store.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collector/storage/payload_codec.h"
#include "collector/storage/pg_batch_writer.h"
#include "collector/storage/pg_connection.h"
#include "collector/storage/pg_job_admin.h"
#include "collector/storage/pg_migrations.h"
#include "collector/storage/pg_pool.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

// Advisory lock key space: (kLockClass, hashtext(schema)). 'gpsy'.
constexpr int64_t kLockClass = 0x67707379;
constexpr absl::Duration kLockWait = absl::Milliseconds(1500);

// A decompressed payload larger than this is damage, not data (bytea itself stops at 1 GiB).
constexpr size_t kMaxPayloadBytes = 1ull << 30;

constexpr char kProcessColumns[] =
    "SELECT process_id, identity, first_seen_ns, last_seen_ns, event_count, batch_count, "
    "max_sequence, cupti_dropped, queue_dropped, spill_dropped FROM processes ";

// The columns ReadBatches and ReadBatchesAfter read, in the order BatchesFrom expects.
constexpr char kBatchColumns[] =
    "SELECT sequence, min_ns, max_ns, event_count, cupti_dropped, queue_dropped, spill_dropped, "
    "payload, payload_zstd FROM batches";

class PostgresStore final : public Store {
 public:
  explicit PostgresStore(PostgresStoreOptions options) : options_(std::move(options)) {}

  absl::Status Open();

  absl::StatusOr<uint64_t> UpsertProcess(const v1::ProcessIdentity& identity,
                                         int64_t now_unix_ns) override;
  absl::StatusOr<ProcessRecord> GetProcess(uint64_t process_id) override;
  absl::StatusOr<std::vector<ProcessRecord>> ListProcesses(const std::string& job_id) override;
  absl::Status AppendDictionary(uint64_t process_id, const v1::Dictionary& defs) override;
  absl::StatusOr<v1::Dictionary> LoadDictionary(uint64_t process_id) override;
  absl::Status AppendBatch(const StoredBatch& batch) override { return writer_->Append(batch); }
  absl::StatusOr<std::vector<StoredBatch>> ReadBatches(uint64_t process_id, int64_t from_ns,
                                                       int64_t to_ns) override;
  absl::StatusOr<std::vector<StoredBatch>> ReadBatchesAfter(uint64_t process_id,
                                                            uint64_t after_sequence,
                                                            size_t limit) override;
  absl::Status UpsertSteps(const std::vector<StepRecord>& steps) override;
  absl::StatusOr<std::vector<StepRecord>> ListSteps(uint64_t process_id) override;
  absl::StatusOr<uint64_t> DeleteProcesses(const std::vector<uint64_t>& process_ids) override {
    return PgDeleteProcesses(*pool_->Acquire(), process_ids);
  }
  absl::StatusOr<uint64_t> RenameJob(const std::string& from, const std::string& to) override {
    return PgRenameJob(*pool_->Acquire(), from, to);
  }
  absl::Status ReplaceSteps(uint64_t process_id, const std::vector<StepRecord>& steps) override {
    return PgReplaceSteps(*pool_->Acquire(), process_id, steps);
  }
  absl::Status SetJobStepPattern(const std::string& job_id, const std::string& pattern) override {
    return PgSetJobStepPattern(*pool_->Acquire(), job_id, pattern);
  }
  absl::StatusOr<std::string> GetJobStepPattern(const std::string& job_id) override {
    return PgGetJobStepPattern(*pool_->Acquire(), job_id);
  }
  absl::Status CommitImport(uint64_t process_id) override {
    return PgCommitImport(*pool_->Acquire(), process_id);
  }
  absl::StatusOr<uint64_t> DiscardPendingImport(const std::string& process_key) override {
    return PgDiscardPendingImports(*pool_->Acquire(), process_key);
  }
  absl::StatusOr<uint64_t> EnforceRetention(const RetentionPolicy& policy,
                                            int64_t now_unix_ns) override {
    return writer_->EnforceRetention(policy, now_unix_ns);
  }
  StoreStats Stats() override;
  absl::Status Flush() override { return writer_->Flush(); }

 private:
  PgConnectOptions ConnectOptions() const;
  absl::StatusOr<std::vector<ProcessRecord>> Processes(const std::string& where,
                                                       const PgParams& params);

  PostgresStoreOptions options_;
  std::unique_ptr<PgPool> pool_;
  std::unique_ptr<PgBatchWriter> writer_;
  // Rows of kBatchColumns -> batches (a payload that does not decompress is counted, skipped).
  std::vector<StoredBatch> BatchesFrom(const PgResult& rows, uint64_t process_id);
  std::atomic<uint64_t> corrupt_records_{0};
};

PgConnectOptions PostgresStore::ConnectOptions() const {
  PgConnectOptions o;
  o.conninfo = options_.conninfo;
  o.connect_timeout_s = options_.connect_timeout_s;
  // The schema may not exist yet when the writer first connects: search_path names it anyway and
  // picks it up once created.
  o.session_setup = {"SET client_min_messages TO warning",
                     absl::StrCat("SET search_path TO ", PgQuoteIdentifier(options_.schema))};
  return o;
}

absl::Status PostgresStore::Open() {
  PgConnectOptions writer_options = ConnectOptions();
  const std::string schema = options_.schema;
  // Taken again on every reconnect: the lock belongs to the session.
  writer_options.on_connect = [schema](PgConnection& c) -> absl::Status {
    // A daemon that just stopped (or a connection the store just dropped) releases the lock when
    // its server process has exited, a moment after the client went away: retry briefly before
    // calling the schema taken.
    const absl::Time deadline = absl::Now() + kLockWait;
    while (true) {
      PgParams p;
      p.Int(kLockClass).Text(schema);
      absl::StatusOr<PgResult> r =
          c.Query("SELECT pg_try_advisory_lock($1::bigint::integer, hashtext($2))", p);
      if (!r.ok()) return r.status();
      if (r->rows() == 1 && r->Int(0, 0) != 0) return absl::OkStatus();
      if (absl::Now() >= deadline) {
        return absl::FailedPreconditionError(absl::StrCat(
            "PostgreSQL schema '", schema, "' at ", c.where(), " is in use by another gpuspyd"));
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  };
  absl::StatusOr<std::unique_ptr<PgConnection>> writer = PgConnection::Connect(writer_options);
  if (!writer.ok()) return writer.status();
  if (absl::Status st = (*writer)->Run(absl::StrCat("CREATE SCHEMA IF NOT EXISTS ",
                                                    PgQuoteIdentifier(options_.schema)));
      !st.ok()) {
    return st;
  }
  if (absl::Status st = MigratePostgres(**writer, PgMigrations()); !st.ok()) return st;
  PgBatchWriterOptions wo;
  wo.partition_max_bytes = options_.partition_max_bytes;
  wo.partition_max_age_ns = options_.partition_max_age_ns;
  wo.compress = options_.compress;
  wo.on_roll = [this] { NoteRoll(); };
  absl::StatusOr<std::unique_ptr<PgBatchWriter>> w = PgBatchWriter::Open(std::move(*writer), wo);
  if (!w.ok()) return w.status();
  writer_ = std::move(*w);
  // Metadata commits (processes, dictionaries, steps) do not wait for their own WAL flush: the
  // batch commits that depend on them flush the WAL up to their own, later, commit record, which
  // covers every earlier commit. An acknowledged batch is as durable as before, with about half the
  // WAL flushes (one per group commit instead of one more per step index update). What is left
  // exposed is a step index update after the last batch, to a crash of the database server (not
  // of gpuspyd); Flush() closes that at shutdown.
  PgConnectOptions pool_options = ConnectOptions();
  pool_options.session_setup.push_back("SET synchronous_commit TO off");
  absl::StatusOr<std::unique_ptr<PgPool>> pool = PgPool::Open(pool_options, options_.pool_size);
  if (!pool.ok()) return pool.status();
  pool_ = std::move(*pool);
  // Under the schema's lock no stream of this daemon is open yet: what is pending was left by a
  // collector that stopped while an import was sent.
  absl::StatusOr<uint64_t> dropped = PgDiscardPendingImports(*pool_->Acquire(), std::nullopt);
  if (!dropped.ok()) return dropped.status();
  if (*dropped > 0) {
    spdlog::warn("storage: dropped {} import(s) left unfinished when the collector stopped", *dropped);
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> PostgresStore::UpsertProcess(const v1::ProcessIdentity& identity,
                                                      int64_t now) {
  std::string blob;
  identity.SerializeToString(&blob);
  PgPool::Lease c = pool_->Acquire();
  // Update first: a process says hello on every (re)connect, and INSERT .. ON CONFLICT would use
  // up an identity value each time.
  {
    PgParams p;
    p.Bytes(blob).Text(identity.job_id()).Int(now).Text(identity.process_key());
    absl::StatusOr<PgResult> r = c->Query(
        "UPDATE processes SET identity = $1, job_id = $2, last_seen_ns = $3 "
        "WHERE process_key = $4 RETURNING process_id",
        p);
    if (!r.ok()) return r.status();
    if (r->rows() == 1) return static_cast<uint64_t>(r->Int(0, 0));
  }
  // An import is pending until its last batch is stored (store.h: CommitImport).
  PgParams p;
  p.Text(identity.process_key()).Text(identity.job_id()).Bytes(blob).Int(now)
      .Bool(!identity.content_sha256().empty());
  absl::StatusOr<PgResult> r = c->Query(
      "INSERT INTO processes(process_key, job_id, identity, first_seen_ns, last_seen_ns, pending) "
      "VALUES($1, $2, $3, $4, $4, $5) ON CONFLICT (process_key) DO UPDATE SET "
      "identity = EXCLUDED.identity, job_id = EXCLUDED.job_id, last_seen_ns = EXCLUDED.last_seen_ns "
      "RETURNING process_id",
      p);
  if (!r.ok()) return r.status();
  return static_cast<uint64_t>(r->Int(0, 0));
}

absl::StatusOr<std::vector<ProcessRecord>> PostgresStore::Processes(const std::string& where,
                                                                    const PgParams& params) {
  absl::StatusOr<PgResult> r = pool_->Acquire()->Query(
      absl::StrCat(kProcessColumns, where, " ORDER BY process_id"), params);
  if (!r.ok()) return r.status();
  std::vector<ProcessRecord> out;
  out.reserve(static_cast<size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    ProcessRecord p;
    p.process_id = static_cast<uint64_t>(r->Int(i, 0));
    const std::string_view identity = r->Bytes(i, 1);
    if (!p.identity.ParseFromArray(identity.data(), static_cast<int>(identity.size()))) {
      return absl::DataLossError(absl::StrCat("process ", p.process_id, ": identity unreadable"));
    }
    p.first_seen_unix_ns = r->Int(i, 2);
    p.last_seen_unix_ns = r->Int(i, 3);
    p.event_count = static_cast<uint64_t>(r->Int(i, 4));
    p.batch_count = static_cast<uint64_t>(r->Int(i, 5));
    p.max_sequence = static_cast<uint64_t>(r->Int(i, 6));
    p.loss = {static_cast<uint64_t>(r->Int(i, 7)), static_cast<uint64_t>(r->Int(i, 8)),
              static_cast<uint64_t>(r->Int(i, 9))};
    out.push_back(std::move(p));
  }
  return out;
}

absl::StatusOr<ProcessRecord> PostgresStore::GetProcess(uint64_t process_id) {
  PgParams p;
  p.Int(static_cast<int64_t>(process_id));
  absl::StatusOr<std::vector<ProcessRecord>> r = Processes("WHERE process_id = $1", p);
  if (!r.ok()) return r.status();
  if (r->empty()) return absl::NotFoundError(absl::StrCat("no process ", process_id));
  return std::move(r->front());
}

absl::StatusOr<std::vector<ProcessRecord>> PostgresStore::ListProcesses(const std::string& job_id) {
  // Pending imports are not there yet (store.h: CommitImport).
  if (job_id.empty()) return Processes("WHERE NOT pending", PgParams());
  PgParams p;
  p.Text(job_id);
  return Processes("WHERE job_id = $1 AND NOT pending", p);
}

absl::Status PostgresStore::AppendDictionary(uint64_t process_id, const v1::Dictionary& defs) {
  std::string blob;
  defs.SerializeToString(&blob);
  PgParams p;
  p.Int(static_cast<int64_t>(process_id)).Bytes(blob);
  return pool_->Acquire()
      ->Query("INSERT INTO dictionary(process_id, defs) VALUES($1, $2)", p)
      .status();
}

absl::StatusOr<v1::Dictionary> PostgresStore::LoadDictionary(uint64_t process_id) {
  PgParams p;
  p.Int(static_cast<int64_t>(process_id));
  absl::StatusOr<PgResult> r = pool_->Acquire()->Query(
      "SELECT defs FROM dictionary WHERE process_id = $1 ORDER BY chunk", p);
  if (!r.ok()) return r.status();
  v1::Dictionary out;
  for (int i = 0; i < r->rows(); ++i) {
    // Repeated fields concatenate on merge: the union of all chunks, in arrival order.
    const std::string_view defs = r->Bytes(i, 0);
    if (!out.MergeFromString(std::string(defs))) {
      return absl::DataLossError(absl::StrCat("process ", process_id, ": dictionary unreadable"));
    }
  }
  return out;
}

absl::StatusOr<std::vector<StoredBatch>> PostgresStore::ReadBatches(uint64_t process_id,
                                                                    int64_t from_ns,
                                                                    int64_t to_ns) {
  const bool all = from_ns == 0 && to_ns == 0;
  PgParams p;
  p.Int(static_cast<int64_t>(process_id));
  if (!all) p.Int(from_ns).Int(to_ns);
  absl::StatusOr<PgResult> r = pool_->Acquire()->Query(
      absl::StrCat(kBatchColumns, " WHERE process_id = $1",
                   all ? "" : " AND max_ns >= $2 AND min_ns < $3", " ORDER BY sequence"),
      p);
  if (!r.ok()) return r.status();
  return BatchesFrom(*r, process_id);
}

absl::StatusOr<std::vector<StoredBatch>> PostgresStore::ReadBatchesAfter(uint64_t process_id,
                                                                         uint64_t after_sequence,
                                                                         size_t limit) {
  PgParams p;
  p.Int(static_cast<int64_t>(process_id)).Int(static_cast<int64_t>(after_sequence))
      .Int(static_cast<int64_t>(limit));
  absl::StatusOr<PgResult> r = pool_->Acquire()->Query(
      absl::StrCat(kBatchColumns,
                   " WHERE process_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3"),
      p);
  if (!r.ok()) return r.status();
  return BatchesFrom(*r, process_id);
}

std::vector<StoredBatch> PostgresStore::BatchesFrom(const PgResult& rows, uint64_t process_id) {
  std::vector<StoredBatch> out;
  out.reserve(static_cast<size_t>(rows.rows()));
  for (int i = 0; i < rows.rows(); ++i) {
    StoredBatch b;
    b.process_id = process_id;
    b.sequence = static_cast<uint64_t>(rows.Int(i, 0));
    b.min_ns = rows.Int(i, 1);
    b.max_ns = rows.Int(i, 2);
    b.event_count = static_cast<uint32_t>(rows.Int(i, 3));
    b.loss = {static_cast<uint64_t>(rows.Int(i, 4)), static_cast<uint64_t>(rows.Int(i, 5)),
              static_cast<uint64_t>(rows.Int(i, 6))};
    b.payload = std::string(rows.Bytes(i, 7));
    if (rows.Int(i, 8) != 0) {
      absl::StatusOr<std::string> raw = DecompressPayload(b.payload, kMaxPayloadBytes);
      if (!raw.ok()) {
        // The database checks its own pages; this is a payload that was stored damaged or was
        // changed behind the store's back. Like a failed checksum in the embedded store.
        ++corrupt_records_;
        spdlog::error("storage: process {} batch {} skipped: {}", process_id, b.sequence,
                      raw.status().ToString());
        continue;
      }
      b.payload = std::move(*raw);
    }
    out.push_back(std::move(b));
  }
  return out;
}

absl::Status PostgresStore::UpsertSteps(const std::vector<StepRecord>& steps) {
  if (steps.empty()) return absl::OkStatus();
  // One statement for all of them; ON CONFLICT may touch a row only once per statement, so a step
  // given twice keeps its last version, as sequential replaces would.
  std::map<std::pair<uint64_t, int64_t>, const StepRecord*> last;
  for (const StepRecord& s : steps) last[{s.process_id, s.number}] = &s;
  std::vector<int64_t> process, number, start, end;
  std::vector<std::string> source;
  for (const auto& [key, s] : last) {
    process.push_back(static_cast<int64_t>(s->process_id));
    number.push_back(s->number);
    start.push_back(s->start_ns);
    end.push_back(s->end_ns);
    source.push_back(s->source);
  }
  PgParams p;
  p.IntArray(process).IntArray(number).IntArray(start).IntArray(end).TextArray(source);
  return pool_->Acquire()
      ->Query("INSERT INTO steps(process_id, number, start_ns, end_ns, source) "
              "SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], "
              "$5::text[]) ON CONFLICT (process_id, number) DO UPDATE SET "
              "start_ns = EXCLUDED.start_ns, end_ns = EXCLUDED.end_ns, source = EXCLUDED.source",
              p)
      .status();
}

absl::StatusOr<std::vector<StepRecord>> PostgresStore::ListSteps(uint64_t process_id) {
  PgParams p;
  p.Int(static_cast<int64_t>(process_id));
  absl::StatusOr<PgResult> r = pool_->Acquire()->Query(
      "SELECT number, start_ns, end_ns, source FROM steps WHERE process_id = $1 ORDER BY number",
      p);
  if (!r.ok()) return r.status();
  std::vector<StepRecord> out;
  out.reserve(static_cast<size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    out.push_back({process_id, r->Int(i, 0), r->Int(i, 1), r->Int(i, 2), std::string(r->Bytes(i, 3))});
  }
  return out;
}

StoreStats PostgresStore::Stats() {
  StoreStats s;
  s.segments_evicted = writer_->partitions_dropped();
  s.write_errors = writer_->write_errors();
  s.corrupt_records = corrupt_records_.load();
  // Every table of the schema with its TOAST data and indexes (partitions are tables; the
  // partitioned parent itself holds nothing).
  absl::StatusOr<PgResult> r = pool_->Acquire()->Query(
      "SELECT (SELECT count(*) FROM batches), (SELECT count(*) FROM batch_partitions), "
      "(SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c "
      " WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
      " AND c.relkind IN ('r', 'm'))");
  if (!r.ok()) {
    spdlog::warn("storage: stats: {}", r.status().ToString());
    return s;
  }
  s.batches = static_cast<uint64_t>(r->Int(0, 0));
  s.segments = static_cast<uint64_t>(r->Int(0, 1));
  s.bytes_on_disk = static_cast<uint64_t>(r->Int(0, 2));
  return s;
}

}  // namespace

std::string DescribePostgres(const std::string& conninfo) {
  absl::StatusOr<std::string> where = DescribeConninfo(conninfo);
  return where.ok() ? absl::StrCat("PostgreSQL ", *where) : "PostgreSQL (unparsable conninfo)";
}

absl::StatusOr<std::unique_ptr<Store>> OpenPostgresStore(const PostgresStoreOptions& options) {
  if (options.schema.empty() || options.schema.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("PostgreSQL schema name must be non-empty text");
  }
  if (options.partition_max_bytes == 0) {
    return absl::InvalidArgumentError("partition_max_bytes must be positive");
  }
  auto store = std::make_unique<PostgresStore>(options);
  if (absl::Status st = store->Open(); !st.ok()) return st;
  return store;
}

}  // namespace gpuspy::collector
