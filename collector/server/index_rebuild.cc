#include "collector/server/index_rebuild.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <algorithm>
#include <map>
#include <shared_mutex>
#include <tuple>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "codec/dictionary_placeholders.h"
#include "collector/ingest/batch_ingestor.h"
#include "collector/live/job_step_patterns.h"
#include "collector/server/data_dir_lock.h"
#include "collector/storage/dictionary_cache.h"
#include "collector/storage/segment_file.h"
#include "collector/storage/store.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

namespace fs = std::filesystem;

constexpr char kSourceDir[] = "segments.rebuild-source";
// Where a process's batches go when no identity record of it survived (data written before
// identity records existed, or, in segments from before each one repeated its processes'
// identities, the one segment holding the record was lost).
constexpr char kUnknownJob[] = "unknown";

// Closes the data dir lock on every path out.
struct LockGuard {
  int fd;
  ~LockGuard() { close(fd); }
};

// seg-NNNNNNNN.gseg files of `dir` by id (quarantine/ and anything else left alone).
std::map<uint64_t, std::string> SegmentFiles(const std::string& dir) {
  std::map<uint64_t, std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    unsigned long long id = 0;
    char tail = 0;
    const std::string name = entry.path().filename().string();
    if (std::sscanf(name.c_str(), "seg-%llu.gse%c", &id, &tail) == 2 && tail == 'g') {
      out[id] = entry.path().string();
    }
  }
  return out;
}

// Moves the damaged index and the segments out of the way, once; an interrupted rebuild finds
// the source already there and clears only its own half-made output.
absl::Status SetAside(const std::string& data_dir, RebuildResult* result) {
  const std::string source = data_dir + "/" + kSourceDir;
  std::error_code ec;
  if (fs::exists(source)) {
    spdlog::warn("rebuild: {} exists (an interrupted rebuild); starting again from it", source);
    for (const char* f : {"/index.sqlite", "/index.sqlite-wal", "/index.sqlite-shm"}) {
      fs::remove(data_dir + f, ec);
    }
    fs::remove_all(data_dir + "/segments", ec);
    return absl::OkStatus();
  }
  if (!fs::is_directory(data_dir + "/segments")) {
    return absl::FailedPreconditionError(
        absl::StrCat(data_dir, " has no segments/ directory: nothing to rebuild the index from"));
  }
  if (fs::exists(data_dir + "/index.sqlite")) {
    result->damaged_index =
        absl::StrCat(data_dir, "/index.sqlite.damaged-", absl::ToUnixSeconds(absl::Now()));
    for (const char* suffix : {"", "-wal", "-shm"}) {
      const std::string from = absl::StrCat(data_dir, "/index.sqlite", suffix);
      if (!fs::exists(from)) continue;
      fs::rename(from, result->damaged_index + suffix, ec);
      if (ec) return absl::UnavailableError(absl::StrCat("cannot move ", from, ": ", ec.message()));
    }
  }
  fs::rename(data_dir + "/segments", source, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot move the segments to ", source, ": ", ec.message()));
  return absl::OkStatus();
}

// The identities found in the segments: per old process id, the last record (later ones are
// newer: a changed identity is written again, and eviction copies only the current one). Each
// segment repeats the identities of the processes it holds, so a process keeps its name and rank
// when any of its segments survives; older segments, with one record per process, read the same.
std::map<uint64_t, v1::ProcessIdentity> ReadIdentities(const std::map<uint64_t, std::string>& files) {
  std::map<uint64_t, v1::ProcessIdentity> out;
  for (const auto& [id, path] : files) {
    uint64_t unreadable = 0;
    absl::StatusOr<std::vector<ScannedRecord>> records = ScanSegmentRecords(path, &unreadable);
    if (!records.ok()) continue;  // reported by the batch pass
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    for (const ScannedRecord& r : *records) {
      if (r.sequence != kIdentityRecordSequence) continue;
      absl::StatusOr<std::string> bytes = ReadSegmentRecord(fd, path, r.offset, r.length, r.process_id, r.sequence);
      v1::ProcessIdentity identity;
      if (bytes.ok() && identity.ParseFromString(*bytes)) out[r.process_id] = std::move(identity);
    }
    close(fd);
  }
  return out;
}

// The damaged index a rebuild set aside: this one's, or an interrupted rebuild's (the newest).
std::string DamagedIndex(const std::string& data_dir, const RebuildResult& result) {
  if (!result.damaged_index.empty()) return result.damaged_index;
  std::string newest;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(data_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("index.sqlite.damaged-", 0) != 0 || name.find('-', 21) != std::string::npos) continue;
    if (entry.path().string() > newest) newest = entry.path().string();
  }
  return newest;
}

// Job step patterns (Store::SetJobStepPattern) live only in the index, not in the segments: read
// them back from the damaged index, read-only, as far as its pages allow. What cannot be read is
// lost, with a warning (`gpuspy jobs set-step-pattern` sets it again).
std::vector<std::pair<std::string, std::string>> SalvageStepPatterns(const std::string& index) {
  std::vector<std::pair<std::string, std::string>> out;
  if (index.empty()) return out;
  sqlite3* db = nullptr;
  sqlite3_stmt* q = nullptr;
  int rc = sqlite3_open_v2(index.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "SELECT job_id, step_pattern FROM job_settings", -1, &q, nullptr);
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    rc = sqlite3_step(q);
    if (rc != SQLITE_ROW) break;
    auto text = [q](int column) {
      const auto* p = sqlite3_column_text(q, column);
      return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p));
    };
    out.emplace_back(text(0), text(1));
  }
  // An index from before job step patterns (migration 006) has no table: nothing was lost.
  const bool no_table = rc != SQLITE_DONE && db != nullptr &&
                        std::string_view(sqlite3_errmsg(db)).starts_with("no such table");
  if (rc != SQLITE_DONE && !no_table) {
    spdlog::warn("rebuild: the job step patterns in {} could not all be read ({}): jobs that had "
                 "their own have gpuspyd's again (gpuspy jobs set-step-pattern)",
                 index, db != nullptr ? sqlite3_errmsg(db) : "cannot open");
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  return out;
}

// Every batch record of the segments, replayed process by process in each one's sequence order.
// File order is not that order: quarantine copies a damaged segment's readable records into the
// newest segment, so a process's early batches, which define the names its later batches use,
// came after them, and every later batch failed with "refers to undefined ref" (69,046 events of
// an undamaged job came back as 20,903, issue 34).
class Reingest {
 public:
  Reingest(Store* store, const ServerOptions& options, std::map<uint64_t, v1::ProcessIdentity> identities,
           JobStepPatterns* patterns, RebuildResult* result)
      : store_(store),
        dictionaries_(store),
        ingestor_(store, &dictionaries_, &counters_, analysis::StepSegmenter(options.step_pattern)),
        identities_(std::move(identities)),
        result_(result) {
    ingestor_.set_job_patterns(patterns);
  }
  ~Reingest() {
    for (const auto& [id, fd] : fds_) close(fd);
  }

  // Takes note of the batch records of the segment file at `path`; Run reads them.
  absl::Status Scan(uint64_t file_id, const std::string& path) {
    uint64_t unreadable = 0;
    absl::StatusOr<std::vector<ScannedRecord>> records = ScanSegmentRecords(path, &unreadable);
    if (!records.ok()) return records.status();
    if (unreadable > 0) {
      spdlog::warn("rebuild: {}: the last {} bytes are not records (a torn tail or damage)", path, unreadable);
      result_->unreadable_bytes += unreadable;
    }
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot open ", path));
    fds_[file_id] = fd;
    paths_[file_id] = path;
    for (const ScannedRecord& r : *records) {
      if (r.sequence != kIdentityRecordSequence) records_.push_back({file_id, r});
    }
    return absl::OkStatus();
  }

  // Processes in their old id order (so the new ids keep it), each one's batches by sequence; a
  // batch found twice (quarantine's copy and the original) is stored once (the second is a
  // duplicate to the store).
  absl::Status Run() {
    std::stable_sort(records_.begin(), records_.end(), [](const Source& a, const Source& b) {
      return std::tie(a.record.process_id, a.record.sequence) < std::tie(b.record.process_id, b.record.sequence);
    });
    for (const Source& s : records_) {
      if (absl::Status st = Record(s); !st.ok()) return st;
    }
    return absl::OkStatus();
  }

 private:
  struct Source {
    uint64_t file_id;
    ScannedRecord record;
  };

  absl::Status Record(const Source& s) {
    const ScannedRecord& r = s.record;
    const std::string& path = paths_[s.file_id];
    absl::StatusOr<std::string> bytes = ReadSegmentRecord(fds_[s.file_id], path, r.offset, r.length, r.process_id, r.sequence);
    v1::EventBatch batch;
    if (!bytes.ok() || !batch.ParseFromString(*bytes)) {
      return Skip(r, bytes.ok() ? "not an EventBatch" : std::string(bytes.status().message()));
    }
    absl::StatusOr<uint64_t> process = NewProcessId(r.process_id);
    if (!process.ok()) return process.status();  // the new store failed: stop
    // The segment's bytes are what the producer sent: the new store keeps them as they are.
    absl::StatusOr<v1::Ack> ack = ingestor_.Ingest(*process, batch, *std::move(bytes));
    if (absl::IsInvalidArgument(ack.status())) ack = WithPlaceholders(*process, std::move(batch), ack.status());
    if (absl::IsInvalidArgument(ack.status())) return Skip(r, std::string(ack.status().message()));
    if (!ack.ok()) return ack.status();
    if (!ack->duplicate()) {
      ++result_->batches;
      result_->events += counters_.events_stored.load() - events_seen_;
    }
    events_seen_ = counters_.events_stored.load();
    return absl::OkStatus();
  }

  // A batch whose names were defined by a batch that is gone (its segment damaged or deleted)
  // is kept with stand-ins for them (codec/dictionary_placeholders.h), stored with the stand-ins
  // in its dictionary so that it reads back the same way.
  absl::StatusOr<v1::Ack> WithPlaceholders(uint64_t process, v1::EventBatch batch, absl::Status refused) {
    absl::StatusOr<std::shared_ptr<DictionaryCache::Entry>> entry = dictionaries_.Get(process);
    if (!entry.ok()) return entry.status();
    size_t count = 0;
    v1::Dictionary stand_ins;
    {
      std::shared_lock lock((*entry)->mu);
      stand_ins = PlaceholdersForUndefinedRefs(batch, (*entry)->dict, &count);
    }
    if (count == 0) return refused;  // malformed for another reason
    batch.mutable_dictionary()->MergeFrom(stand_ins);
    absl::StatusOr<v1::Ack> ack = ingestor_.Ingest(process, batch);
    if (ack.ok() && !ack->duplicate()) {
      ++result_->batches_with_placeholders;
      result_->placeholder_definitions += count;
    }
    return ack;
  }

  absl::Status Skip(const ScannedRecord& r, const std::string& why) {
    ++result_->skipped_records;
    spdlog::warn("rebuild: process {} batch {} skipped: {}", r.process_id, r.sequence, why);
    return absl::OkStatus();
  }

  // The process is recorded straight in the store, not through ingest's Hello: what the segments
  // hold was accepted once, and an import found in them was complete enough to be stored
  // (committed here; the rebuild cannot tell a finished import from one cut short).
  absl::StatusOr<uint64_t> NewProcessId(uint64_t old_id) {
    if (auto it = new_ids_.find(old_id); it != new_ids_.end()) return it->second;
    v1::ProcessIdentity identity;
    if (auto it = identities_.find(old_id); it != identities_.end()) {
      identity = it->second;
    } else {
      ++result_->processes_without_identity;
      identity.set_process_key(absl::StrCat("rebuilt-process-", old_id));
      identity.set_job_id(kUnknownJob);
      spdlog::warn("rebuild: process {} has no identity record; its batches go to job '{}'", old_id,
                   kUnknownJob);
    }
    absl::StatusOr<uint64_t> id = store_->UpsertProcess(identity, absl::ToUnixNanos(absl::Now()));
    if (!id.ok()) return id.status();
    if (absl::Status st = store_->CommitImport(*id); !st.ok()) return st;
    ++result_->processes;
    new_ids_[old_id] = *id;
    return *id;
  }

  Store* store_;
  IngestCounters counters_;
  DictionaryCache dictionaries_;
  BatchIngestor ingestor_;
  std::map<uint64_t, v1::ProcessIdentity> identities_;
  std::map<uint64_t, uint64_t> new_ids_;  // old process id -> id in the rebuilt index
  std::map<uint64_t, int> fds_;           // segment file id -> open for reading
  std::map<uint64_t, std::string> paths_;
  std::vector<Source> records_;
  uint64_t events_seen_ = 0;
  RebuildResult* result_;
};

}  // namespace

absl::StatusOr<RebuildResult> RebuildIndex(const ServerOptions& options) {
  if (!options.postgres.empty()) {
    return absl::InvalidArgumentError("--rebuild-index applies to the embedded store (--data-dir), not --postgres");
  }
  const std::string& data_dir = options.data_dir;
  absl::StatusOr<int> lock = LockDataDir(data_dir);
  if (!lock.ok()) return lock.status();
  LockGuard guard{*lock};
  RebuildResult result;
  if (absl::Status st = SetAside(data_dir, &result); !st.ok()) return st;
  const std::string source = data_dir + "/" + kSourceDir;
  const std::map<uint64_t, std::string> files = SegmentFiles(source);
  result.segment_files = files.size();

  EmbeddedStoreOptions store_options;
  store_options.data_dir = data_dir;
  store_options.segment_max_bytes = options.segment_bytes;
  store_options.fsync_each_batch = options.fsync_each_batch;
  store_options.compress = options.compress_segments;
  absl::StatusOr<std::unique_ptr<Store>> store = OpenEmbeddedStore(store_options);
  if (!store.ok()) return store.status();
  // The jobs' own step patterns first: their steps are indexed with them as the batches go in.
  for (const auto& [job, pattern] : SalvageStepPatterns(DamagedIndex(data_dir, result))) {
    if (absl::Status st = (*store)->SetJobStepPattern(job, pattern); !st.ok()) return st;
    ++result.step_patterns;
  }
  {
    JobStepPatterns patterns(store->get(), options.step_pattern);
    Reingest reingest(store->get(), options, ReadIdentities(files), &patterns, &result);
    for (const auto& [id, path] : files) {
      if (absl::Status st = reingest.Scan(id, path); !st.ok()) return st;
    }
    if (absl::Status st = reingest.Run(); !st.ok()) return st;
  }
  if (absl::Status st = (*store)->Flush(); !st.ok()) return st;
  store->reset();
  std::error_code ec;
  // Quarantined segments are evidence for whoever looks into the damage: they stay.
  if (fs::exists(source + "/quarantine")) {
    fs::rename(source + "/quarantine", data_dir + "/segments/quarantine", ec);
  }
  if (result.skipped_records == 0 && result.unreadable_bytes == 0) {
    fs::remove_all(source, ec);
  } else {
    result.kept_source = source;
  }
  return result;
}

}  // namespace gpuspy::collector
