// The ingest path without the RPC glue: validate a process's hello, then validate, decode, store
// and index each batch. One instance serves every stream; it is thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "analysis/step_segmenter.h"
#include "collector/live/job_step_patterns.h"
#include "collector/live/ingest_counters.h"
#include "collector/live/memory_totals.h"
#include "collector/storage/dictionary_cache.h"
#include "collector/storage/data_versions.h"
#include "collector/storage/store.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::collector {

// Limits on what a producer may send; larger inputs are refused with InvalidArgument.
inline constexpr size_t kMaxIdentityStringBytes = 4096;
inline constexpr size_t kMaxCommandLineArgs = 4096;
inline constexpr size_t kMaxCommandLineBytes = 1 << 20;  // all arguments together
inline constexpr size_t kMaxDevices = 1024;
inline constexpr size_t kMaxDictionaryStringBytes = 64 * 1024;
// How far past a process's last stored batch a batch's sequence may jump (refused beyond).
inline constexpr uint64_t kMaxSequenceJump = uint64_t{1} << 20;

class BatchIngestor {
 public:
  // `versions` (optional) is told what each stored batch touches, for incremental analysis.
  BatchIngestor(Store* store, DictionaryCache* dictionaries, IngestCounters* counters,
                analysis::StepSegmenter segmenter, DataVersions* versions = nullptr)
      : store_(store), dictionaries_(dictionaries), counters_(counters),
        segmenter_(std::move(segmenter)), versions_(versions) {}

  // Registers (or recognises) the process; the Welcome carries its id and last stored sequence.
  // An import (identity.content_sha256) claims its file until EndStream: AlreadyExists when an
  // import of the same uid holds the file already, or another stream is importing it now. What a
  // dead stream left of an earlier import of the file (pending, store.h) is replaced.
  absl::StatusOr<v1::Welcome> Hello(const v1::ProcessIdentity& identity, int64_t now_unix_ns);

  // The stream of a process that said Hello ended. An import releases its claim and is committed
  // when `complete` (the producer closed the stream after its last acknowledged batch); otherwise
  // it stays pending, listed nowhere, until it is imported again or the store opens next.
  absl::Status EndStream(uint64_t process_id, const v1::ProcessIdentity& identity, bool complete);

  // Stores one batch of `process_id`: `batch`, parsed from `received` (the bytes its producer
  // sent), which are stored as they are. Only what the index needs is decoded (time range, event
  // count, steps). Errors: InvalidArgument (malformed batch; the producer must drop it),
  // ResourceExhausted (disk full; the producer should keep it and retry later),
  // Internal/Unavailable (storage trouble).
  absl::StatusOr<v1::Ack> Ingest(uint64_t process_id, const v1::EventBatch& batch,
                                 std::string received);
  // The same for a batch held only as a message (built by a test, merged from several fields of
  // one ClientMessage): stored as it serializes.
  absl::StatusOr<v1::Ack> Ingest(uint64_t process_id, const v1::EventBatch& batch);

  // Steps are then found with each job's own pattern where it has one (job_step_patterns.h), the
  // constructor's segmenter otherwise. Set before serving; optional.
  void set_job_patterns(JobStepPatterns* patterns) { patterns_ = patterns; }
  // Each stored batch's memory events are added to `totals` (memory_totals.h). Set before
  // serving; optional.
  void set_memory_totals(MemoryTotals* totals) { memory_totals_ = totals; }

 private:
  absl::Status CheckNotImported(const v1::ProcessIdentity& identity);
  absl::StatusOr<v1::Welcome> Register(const v1::ProcessIdentity& identity, int64_t now_unix_ns);
  absl::Status ApplyDictionary(uint64_t process_id, const v1::Dictionary& defs,
                               DictionaryCache::Entry* entry);
  absl::Status IndexSteps(const ProcessRecord& process, const EventColumns& events,
                          const StringTable& strings);

  Store* store_;
  DictionaryCache* dictionaries_;
  IngestCounters* counters_;
  analysis::StepSegmenter segmenter_;
  DataVersions* versions_;
  JobStepPatterns* patterns_ = nullptr;
  MemoryTotals* memory_totals_ = nullptr;
  // An import's check and claim are one step: with the check and the insert apart, 3 of 7
  // concurrent imports of one file stored it twice (44,220 events for 40,200, issue 34).
  std::mutex import_mu_;
  absl::flat_hash_set<std::string> importing_;  // process keys of imports with an open stream
};

}  // namespace gpuspy::collector
