// The collector's storage interface. The embedded backend (SQLite index + append-only segment
// files) implements it now; the PostgreSQL hub backend plugs in behind the same interface.
//
// Batches are stored exactly as they arrived (compact wire form, gpuspy.v1.EventBatch bytes):
// ~10 B/event, no re-encoding on the ingest path. Decoding them needs the process dictionary,
// which is stored alongside (AppendDictionary / LoadDictionary).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpuspy/v1/identity.pb.h"
#include "gpuspy/v1/wire.pb.h"
#include "model/events.h"

namespace gpuspy::collector {

struct ProcessRecord {
  uint64_t process_id = 0;
  v1::ProcessIdentity identity;
  int64_t first_seen_unix_ns = 0;
  int64_t last_seen_unix_ns = 0;
  uint64_t event_count = 0;      // events in the batches stored now (retention and quarantine
                                 // subtract theirs)
  uint64_t batch_count = 0;      // distinct batches ever stored (eviction is not a gap)
  uint64_t max_sequence = 0;     // highest batch sequence stored
  LossCounters loss;             // latest cumulative counters the process reported
  // Batches never received: max_sequence - batch_count (sequences start at 1).
  uint64_t sequence_gaps() const { return max_sequence > batch_count ? max_sequence - batch_count : 0; }
};

struct StoredBatch {
  uint64_t process_id = 0;
  uint64_t sequence = 0;
  int64_t min_ns = 0;            // earliest event start in the batch (CUPTI clock)
  int64_t max_ns = 0;            // latest event end
  uint32_t event_count = 0;
  LossCounters loss;             // cumulative counters carried by the batch
  std::string payload;           // serialized gpuspy.v1.EventBatch
};

// Where a stored batch sits in time and what its producer had lost when it was cut (no payload):
// enough to tell which steps a process's losses fall into.
struct BatchMark {
  uint64_t sequence = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  LossCounters loss;             // cumulative, as the batch carried them
};

struct StepRecord {
  uint64_t process_id = 0;
  int64_t number = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::string source;            // "nvtx:ProfilerStep#", "window", ...
  friend bool operator==(const StepRecord&, const StepRecord&) = default;
};

struct StoreStats {
  uint64_t bytes_on_disk = 0;    // segment files + index
  uint64_t segments = 0;
  uint64_t batches = 0;          // batches currently stored (after retention)
  uint64_t corrupt_records = 0;  // records skipped on read because their checksum failed
  uint64_t segments_evicted = 0;
  uint64_t write_errors = 0;
  uint64_t segments_quarantined = 0;  // damaged segment files moved aside (good records kept)
  uint64_t records_lost = 0;          // batches of those that could not be read back
};

struct RetentionPolicy {
  uint64_t max_bytes = 0;        // 0 = unlimited
  int64_t max_age_ns = 0;        // 0 = unlimited; age of a segment = now - its last write
};

class Store {
 public:
  virtual ~Store() = default;

  // Finds the process by identity.process_key or creates it; refreshes identity and last_seen.
  virtual absl::StatusOr<uint64_t> UpsertProcess(const v1::ProcessIdentity& identity,
                                                 int64_t now_unix_ns) = 0;
  virtual absl::StatusOr<ProcessRecord> GetProcess(uint64_t process_id) = 0;
  // Every process, or those of one job when job_id is non-empty; ordered by process_id.
  virtual absl::StatusOr<std::vector<ProcessRecord>> ListProcesses(const std::string& job_id) = 0;

  // Dictionary definitions are appended as they arrive; LoadDictionary returns their union.
  virtual absl::Status AppendDictionary(uint64_t process_id, const v1::Dictionary& defs) = 0;
  virtual absl::StatusOr<v1::Dictionary> LoadDictionary(uint64_t process_id) = 0;

  // Stores one batch and updates the process counters. Returns AlreadyExistsError if this
  // (process_id, sequence) is stored already (nothing changes), ResourceExhaustedError when the
  // disk is full (nothing already stored is affected). When it returns OK the batch survives a
  // crash of the collector process.
  virtual absl::Status AppendBatch(const StoredBatch& batch) = 0;
  // Batches of a process overlapping [from_ns, to_ns) (both 0 = all), by sequence. Records that
  // fail their checksum are skipped and counted in StoreStats::corrupt_records.
  virtual absl::StatusOr<std::vector<StoredBatch>> ReadBatches(uint64_t process_id,
                                                               int64_t from_ns,
                                                               int64_t to_ns) = 0;

  // Up to `limit` batches of a process with sequence > `after_sequence`, by sequence: what a node
  // collector still has to forward to its hub. The default reads every batch and filters.
  virtual absl::StatusOr<std::vector<StoredBatch>> ReadBatchesAfter(uint64_t process_id,
                                                                    uint64_t after_sequence,
                                                                    size_t limit);

  // Every stored batch of a process as a BatchMark, by sequence. The default reads every batch;
  // backends that index the counters answer from the index.
  virtual absl::StatusOr<std::vector<BatchMark>> ListBatchMarks(uint64_t process_id);

  // Inserts or replaces steps by (process_id, number).
  virtual absl::Status UpsertSteps(const std::vector<StepRecord>& steps) = 0;
  virtual absl::StatusOr<std::vector<StepRecord>> ListSteps(uint64_t process_id) = 0;
  // Replaces every step of the process with `steps`, in one transaction: its steps found again
  // under another step pattern.
  virtual absl::Status ReplaceSteps(uint64_t process_id, const std::vector<StepRecord>& steps) = 0;

  // The RE2 pattern a job's NVTX steps are found with, in place of gpuspyd's --step-pattern
  // (`gpuspy jobs set-step-pattern`): "" when the job has none. It belongs to the job id, not to
  // its processes (later ones use it too); RenameJob carries it to the new id. Setting "" removes
  // it. The store does not check the pattern: query/job_step_patterns.h does.
  virtual absl::Status SetJobStepPattern(const std::string& job_id, const std::string& pattern) = 0;
  virtual absl::StatusOr<std::string> GetJobStepPattern(const std::string& job_id) = 0;

  // Forgets these processes -- batches, dictionary, steps, the process records -- all of them or
  // none (one transaction). Unknown ids are skipped. Returns how many processes were deleted.
  // Process ids are never reused, so what query-side caches hold for them is simply never asked for.
  virtual absl::StatusOr<uint64_t> DeleteProcesses(const std::vector<uint64_t>& process_ids) = 0;
  // Moves every process of job `from` to job `to`: the job id in the index and in each stored
  // identity, and its step pattern (SetJobStepPattern), all or none. NotFound when `from` has no
  // processes, AlreadyExists when `to` has. Returns how many processes moved.
  virtual absl::StatusOr<uint64_t> RenameJob(const std::string& from, const std::string& to) = 0;
  // The processes whose identity carries this import content hash (ProcessIdentity.content_sha256),
  // by process_id. The default reads every process: imports are rare, processes thousands at most.
  virtual absl::StatusOr<std::vector<ProcessRecord>> FindByContentHash(const std::string& content_sha256);

  // An import (identity.content_sha256 set) is complete or absent: both stores create its
  // process pending, listed by neither ListProcesses nor FindByContentHash, until CommitImport
  // (ingest calls it when the import's stream closes after its last batch). A `kill -9` of
  // `gpuspy import` mid-send left 2,029,012 of 2,412,000 events stored for good, and the next
  // import of the file said "already imported" (issue 34). A pending import whose stream died is
  // dropped when the store opens next, or by DiscardPendingImport when the file is imported again.
  // The defaults are for stores without a pending state (test doubles): listed on creation.
  virtual absl::Status CommitImport(uint64_t /*process_id*/) { return absl::OkStatus(); }
  // Deletes the pending (uncommitted) process with this process_key, if any; returns how many.
  virtual absl::StatusOr<uint64_t> DiscardPendingImport(const std::string& /*process_key*/) { return 0; }

  // Evicts whole segments, oldest first, until the policy holds; their events leave the process
  // counts, and steps that end before a process's oldest remaining batch are deleted. Returns
  // segments evicted.
  virtual absl::StatusOr<uint64_t> EnforceRetention(const RetentionPolicy& policy,
                                                    int64_t now_unix_ns) = 0;
  virtual StoreStats Stats() = 0;
  // Makes everything written so far durable (fsync); called on shutdown.
  virtual absl::Status Flush() = 0;

  // Called whenever a new segment (a partition, in PostgreSQL) starts, on the writing thread with
  // the store's locks held, so it must only signal: the sealed one can now be evicted, and gpuspyd
  // runs size retention then instead of waiting for its period (a fast ingest otherwise took the
  // store to 3.8x its limit between two 30 s passes, issue 22). Set before the store is shared.
  void set_roll_observer(std::function<void()> observer) { roll_observer_ = std::move(observer); }

 protected:
  void NoteRoll() const {
    if (roll_observer_) roll_observer_();
  }

 private:
  std::function<void()> roll_observer_;
};

struct EmbeddedStoreOptions {
  std::string data_dir;                       // created if missing
  uint64_t segment_max_bytes = 64ull << 20;   // a segment is sealed and a new one started past this
  bool fsync_each_batch = false;              // power-loss durability per batch (slower)
  bool compress = true;                       // zstd the stored payloads (~2x smaller at rest)
};

// SQLite index + append-only segment files under options.data_dir.
absl::StatusOr<std::unique_ptr<Store>> OpenEmbeddedStore(const EmbeddedStoreOptions& options);

}  // namespace gpuspy::collector
