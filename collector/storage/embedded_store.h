// The embedded Store: batches in append-only segment files under <data_dir>/segments, indexed
// (with processes, dictionaries and steps) in <data_dir>/index.sqlite. Opened through
// OpenEmbeddedStore (store.h); declared here so that its parts can live one idea per file:
//   embedded_store.cc            opening, the active segment, stats
//   embedded_migrations.*        the index schema (embedded/migrations/NNN_name.sql)
//   embedded_store_recovery.cc   crash recovery, orphans, segment quarantine, identity backfill
//   embedded_store_records.cc    processes, dictionaries, batches and steps (the Store calls)
//   embedded_store_identity.cc   identity records: each segment names the processes it holds
//   embedded_store_retention.cc  evicting whole segments, oldest first
//   embedded_store_jobs.cc       deleting processes, renaming jobs, pending imports
//
// Why not events as SQLite rows: a busy job produces 100k+ events/s; a row per event costs
// ~50-100 B and an index update each, while a stored batch costs ~10 B/event and one row per
// ~4k events. Queries read whole batches for a time window, which is what analysis needs.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "collector/storage/segment_file.h"
#include "collector/storage/segment_quarantine.h"
#include "collector/storage/sqlite_db.h"
#include "collector/storage/store.h"

namespace gpuspy::collector {

class EmbeddedStore final : public Store {
 public:
  explicit EmbeddedStore(EmbeddedStoreOptions options) : options_(std::move(options)) {}
  ~EmbeddedStore() override {
    for (auto& [id, fd] : read_fds_) close(fd);
  }

  absl::Status Open();

  absl::StatusOr<uint64_t> UpsertProcess(const v1::ProcessIdentity& identity,
                                         int64_t now_unix_ns) override;
  absl::StatusOr<ProcessRecord> GetProcess(uint64_t process_id) override;
  absl::StatusOr<std::vector<ProcessRecord>> ListProcesses(const std::string& job_id) override;
  absl::Status AppendDictionary(uint64_t process_id, const v1::Dictionary& defs) override;
  absl::StatusOr<v1::Dictionary> LoadDictionary(uint64_t process_id) override;
  absl::Status AppendBatch(const StoredBatch& batch) override;
  absl::StatusOr<std::vector<StoredBatch>> ReadBatches(uint64_t process_id, int64_t from_ns,
                                                       int64_t to_ns) override;
  absl::StatusOr<std::vector<StoredBatch>> ReadBatchesAfter(uint64_t process_id,
                                                            uint64_t after_sequence,
                                                            size_t limit) override;
  absl::StatusOr<std::vector<BatchMark>> ListBatchMarks(uint64_t process_id) override;
  absl::Status UpsertSteps(const std::vector<StepRecord>& steps) override;
  absl::StatusOr<std::vector<StepRecord>> ListSteps(uint64_t process_id) override;
  absl::Status ReplaceSteps(uint64_t process_id, const std::vector<StepRecord>& steps) override;
  absl::Status SetJobStepPattern(const std::string& job_id, const std::string& pattern) override;
  absl::StatusOr<std::string> GetJobStepPattern(const std::string& job_id) override;
  absl::StatusOr<uint64_t> DeleteProcesses(const std::vector<uint64_t>& process_ids) override;
  absl::StatusOr<uint64_t> RenameJob(const std::string& from, const std::string& to) override;
  absl::Status CommitImport(uint64_t process_id) override;
  absl::StatusOr<uint64_t> DiscardPendingImport(const std::string& process_key) override;
  absl::StatusOr<uint64_t> EnforceRetention(const RetentionPolicy& policy,
                                            int64_t now_unix_ns) override;
  StoreStats Stats() override;
  absl::Status Flush() override;

 private:
  static int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }
  static std::string SegmentName(uint64_t id) { return absl::StrFormat("seg-%08d.gseg", id); }
  std::string SegmentDir() const { return options_.data_dir + "/segments"; }
  std::string SegmentPath(uint64_t id) const { return SegmentDir() + "/" + SegmentName(id); }
  absl::Status Recover();
  absl::Status StartSegment(uint64_t id);
  // Seals the active segment (synced, so Flush() need only sync the active one) and starts the
  // next one.
  absl::Status RollSegment();
  absl::Status RemoveOrphanSegments();
  // Sealed segments shorter than their index says (cut by outside damage, or a power loss
  // without --fsync=batch) are quarantined on open.
  absl::Status QuarantineTruncatedSegments();
  // Copies the readable records of segment `id` to the active segment, forgets the others, and
  // moves the file to segments/quarantine/ (segment_quarantine.h). mu_ held (or opening).
  absl::Status QuarantineSegment(uint64_t id, const std::string& why);
  // The index's records in segment `id`, by offset; only the identity records (sequence 0) when
  // `identities_only`. mu_ held (or opening).
  absl::StatusOr<std::vector<IndexedRecord>> RecordsOf(uint64_t id, bool identities_only);
  absl::Status EvictSegment(uint64_t id);
  // Drops segment `id`'s rows from the index, its events from its processes' counts and the steps
  // left without data. mu_ held, inside the caller's transaction.
  absl::Status ForgetSegmentRows(uint64_t id);
  // Deletes the steps of a process that end before its oldest stored batch (all of them when none
  // is left): nothing remains to report on them, and `gpuspy jobs` counts what is stored. mu_
  // held, inside the caller's transaction.
  absl::Status ForgetStepsWithoutData(uint64_t process_id);
  absl::Status WriteIdentityRecord(uint64_t process_id, const std::string& blob);  // mu_ held
  // The serialized identity the processes table holds for `process_id`. mu_ held.
  absl::StatusOr<std::string> IdentityBlob(uint64_t process_id);
  absl::Status BackfillIdentityRecords();
  // Drops the imports left pending by a collector that stopped while they were sent (opening).
  absl::Status DropPendingImports();
  // Deletes one process with everything it owns; mu_ held, inside the caller's transaction.
  absl::Status DeleteProcessRows(uint64_t process_id, uint64_t* deleted);
  absl::Status NoteActiveBytes();
  // The index and its write-ahead log on disk.
  uint64_t IndexBytes() const;
  // Copies the identity records in segment `id` to the active segment (before its eviction).
  absl::Status CarryIdentityRecords(uint64_t id);
  // Whether segment `id` holds any batch (identity records alone are not data to age out).
  absl::StatusOr<bool> HoldsBatches(uint64_t id);
  absl::StatusOr<std::vector<ProcessRecord>> QueryProcesses(const std::string& where,
                                                            const std::string& arg, int64_t id);
  int ReadFd(uint64_t segment_id);
  // Reads the batches a prepared SELECT of (sequence, min_ns, max_ns, event_count, segment_id,
  // offset, length) yields; records failing their checks are skipped and counted. mu_ held.
  absl::StatusOr<std::vector<StoredBatch>> ReadRowsLocked(uint64_t process_id, SqliteStatement& query);

  EmbeddedStoreOptions options_;
  std::mutex mu_;  // guards everything below
  std::unique_ptr<SqliteDb> db_;
  std::unique_ptr<SegmentWriter> active_;
  uint64_t active_id_ = 0;
  bool fresh_index_ = false;  // the index was created by this Open (user_version was 0)
  std::map<uint64_t, int> read_fds_;
  uint64_t carried_bytes_ = 0;  // identity records copied forward by evictions (retention's sum)
  StoreStats stats_;
};

}  // namespace gpuspy::collector
