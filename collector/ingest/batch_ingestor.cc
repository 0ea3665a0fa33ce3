#include "collector/ingest/batch_ingestor.h"

#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/step_finder.h"
#include "codec/batch_decoder.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

absl::Status CheckIdentity(const v1::ProcessIdentity& id) {
  if (id.process_key().empty()) {
    return absl::InvalidArgumentError("hello: identity.process_key is empty");
  }
  auto too_long = [](const std::string& s) { return s.size() > kMaxIdentityStringBytes; };
  for (const std::string* s : {&id.process_key(), &id.job_id(), &id.host(), &id.source(),
                               &id.client_version(), &id.launcher(), &id.job_name(),
                               &id.content_sha256()}) {
    if (too_long(*s)) {
      return absl::InvalidArgumentError(
          absl::StrCat("hello: identity string longer than ", kMaxIdentityStringBytes, " bytes"));
    }
  }
  if (static_cast<size_t>(id.command_line_size()) > kMaxCommandLineArgs) {
    return absl::InvalidArgumentError("hello: command line has too many arguments");
  }
  size_t command_line_bytes = 0;
  for (const std::string& arg : id.command_line()) command_line_bytes += arg.size();
  if (command_line_bytes > kMaxCommandLineBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("hello: command line longer than ", kMaxCommandLineBytes, " bytes"));
  }
  if (static_cast<size_t>(id.devices_size()) > kMaxDevices) {
    return absl::InvalidArgumentError(absl::StrCat("hello: more than ", kMaxDevices, " devices"));
  }
  for (const v1::Device& d : id.devices()) {
    if (too_long(d.name()) || too_long(d.uuid())) {
      return absl::InvalidArgumentError(
          absl::StrCat("hello: device string longer than ", kMaxIdentityStringBytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDictionaryLimits(const v1::Dictionary& defs) {
  for (const auto& s : defs.strings()) {
    if (s.value().size() > kMaxDictionaryStringBytes) {
      return absl::InvalidArgumentError(absl::StrCat("dictionary string ref ", s.ref(), " is ",
                                                     s.value().size(), " bytes (limit ",
                                                     kMaxDictionaryStringBytes, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

// The import CLI asks FindImports before it sends anything; this holds the rule for any other
// client too, and for two imports racing past that question. Scoped to the uid: another user's
// import of the same file is theirs, and naming its job would tell this one about a job it may
// not see. Pending imports (store.h: CommitImport) are not found here: they are replaced.
absl::Status BatchIngestor::CheckNotImported(const v1::ProcessIdentity& identity) {
  absl::StatusOr<std::vector<ProcessRecord>> found = store_->FindByContentHash(identity.content_sha256());
  if (!found.ok()) return found.status();
  for (const ProcessRecord& p : *found) {
    if (p.identity.uid() == identity.uid()) {
      return absl::AlreadyExistsError(absl::StrCat("already imported as job '", p.identity.job_id(),
                                                   "' (process ", p.process_id, ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Welcome> BatchIngestor::Hello(const v1::ProcessIdentity& identity,
                                                 int64_t now_unix_ns) {
  if (absl::Status st = CheckIdentity(identity); !st.ok()) return st;
  v1::ProcessIdentity normalized = identity;
  // Every process belongs to a job; producers that could not find one are grouped per host.
  if (normalized.job_id().empty()) normalized.set_job_id(absl::StrCat("host-", identity.host()));
  if (normalized.content_sha256().empty()) return Register(normalized, now_unix_ns);
  std::lock_guard lock(import_mu_);
  if (importing_.contains(normalized.process_key())) {
    return absl::AlreadyExistsError("this file is being imported by another stream now");
  }
  if (absl::Status st = CheckNotImported(normalized); !st.ok()) return st;
  // No stream holds it, so a pending copy is what a killed import left: start it afresh (the
  // sender numbers its batches from 1 again).
  absl::StatusOr<uint64_t> discarded = store_->DiscardPendingImport(normalized.process_key());
  if (!discarded.ok()) return discarded.status();
  if (*discarded > 0) spdlog::info("import {}: replacing what an unfinished import of it left", normalized.process_key());
  absl::StatusOr<v1::Welcome> welcome = Register(normalized, now_unix_ns);
  if (welcome.ok()) importing_.insert(normalized.process_key());
  return welcome;
}

absl::StatusOr<v1::Welcome> BatchIngestor::Register(const v1::ProcessIdentity& identity, int64_t now_unix_ns) {
  absl::StatusOr<uint64_t> id = store_->UpsertProcess(identity, now_unix_ns);
  if (!id.ok()) return id.status();
  absl::StatusOr<ProcessRecord> record = store_->GetProcess(*id);
  if (!record.ok()) return record.status();
  v1::Welcome welcome;
  welcome.set_process_id(*id);
  welcome.set_last_stored_sequence(record->max_sequence);
  welcome.set_collector_version("gpuspyd 0.1.0");
  return welcome;
}

absl::Status BatchIngestor::EndStream(uint64_t process_id, const v1::ProcessIdentity& identity, bool complete) {
  if (identity.content_sha256().empty()) return absl::OkStatus();
  std::lock_guard lock(import_mu_);
  importing_.erase(identity.process_key());
  if (!complete) {
    spdlog::warn("import of process {} ended before its last batch: not listed until it is imported "
                 "again (or dropped when gpuspyd restarts)", process_id);
    return absl::OkStatus();
  }
  return store_->CommitImport(process_id);
}

absl::Status BatchIngestor::ApplyDictionary(uint64_t process_id, const v1::Dictionary& defs,
                                            DictionaryCache::Entry* entry) {
  if (defs.ByteSizeLong() == 0) return absl::OkStatus();
  if (absl::Status st = CheckDictionaryLimits(defs); !st.ok()) return st;
  {
    std::unique_lock lock(entry->mu);
    if (absl::Status st = entry->dict.Apply(defs); !st.ok()) {
      // Apply may have added a prefix of the definitions; forget them so the cache keeps
      // matching what the store holds.
      lock.unlock();
      dictionaries_->Invalidate(process_id);
      return st;
    }
  }
  return store_->AppendDictionary(process_id, defs);
}

absl::Status BatchIngestor::IndexSteps(const ProcessRecord& process, const EventColumns& events,
                                       const StringTable& strings) {
  if (events.nvtx_ranges.empty()) return absl::OkStatus();
  const uint64_t process_id = process.process_id;
  std::shared_ptr<const analysis::StepSegmenter> own;
  if (patterns_ != nullptr) {
    absl::StatusOr<std::shared_ptr<const analysis::StepSegmenter>> found = patterns_->For(process.identity.job_id());
    if (!found.ok()) return found.status();
    own = *std::move(found);
  }
  std::vector<analysis::StepWindow> found =
      analysis::NvtxStepsOfBatch(own != nullptr ? *own : segmenter_, events, strings);
  if (found.empty()) return absl::OkStatus();
  std::vector<StepRecord> records;
  records.reserve(found.size());
  for (const auto& s : found) {
    records.push_back({process_id, s.number, s.start_ns, s.end_ns, s.source});
  }
  return store_->UpsertSteps(records);
}

absl::StatusOr<v1::Ack> BatchIngestor::Ingest(uint64_t process_id, const v1::EventBatch& batch) {
  std::string bytes;
  if (!batch.SerializeToString(&bytes)) {
    counters_->Add(counters_->batches_received);
    counters_->Add(counters_->batches_rejected);
    return absl::InternalError("batch could not be serialized");
  }
  return Ingest(process_id, batch, std::move(bytes));
}

absl::StatusOr<v1::Ack> BatchIngestor::Ingest(uint64_t process_id, const v1::EventBatch& batch,
                                              std::string received) {
  counters_->Add(counters_->batches_received);
  auto reject = [this](absl::Status st) {
    counters_->Add(counters_->batches_rejected);
    return st;
  };
  if (batch.sequence() == 0) {
    return reject(absl::InvalidArgumentError("batch sequence must start at 1"));
  }
  absl::StatusOr<ProcessRecord> process = store_->GetProcess(process_id);
  if (!process.ok()) return process.status();
  // Producers number their batches 1, 2, 3...; a queue that drops whole batches skips a few.
  // A jump of more than a million cannot be a real capture (it would be ~10^10 events never
  // sent), and one batch numbered 2^64-1 made the collector-wide gap counter 1.8e19 for good.
  if (batch.sequence() > process->max_sequence + kMaxSequenceJump) {
    return reject(absl::InvalidArgumentError(absl::StrCat(
        "batch sequence ", batch.sequence(), " jumps more than ", kMaxSequenceJump,
        " past the last stored batch (", process->max_sequence, ")")));
  }

  absl::StatusOr<std::shared_ptr<DictionaryCache::Entry>> entry = dictionaries_->Get(process_id);
  if (!entry.ok()) return entry.status();
  if (absl::Status st = ApplyDictionary(process_id, batch.dictionary(), entry->get()); !st.ok()) {
    return reject(absl::Status(st.code(), absl::StrCat("batch ", batch.sequence(), ": ",
                                                       st.message())));
  }

  EventColumns events;
  {
    std::shared_lock lock((*entry)->mu);
    if (absl::Status st = DecodeBatch(batch, (*entry)->dict, &events); !st.ok()) {
      return reject(absl::InvalidArgumentError(
          absl::StrCat("batch ", batch.sequence(), ": ", st.message())));
    }
  }

  StoredBatch stored;
  stored.process_id = process_id;
  stored.sequence = batch.sequence();
  std::tie(stored.min_ns, stored.max_ns) = events.TimeRange();
  stored.event_count = static_cast<uint32_t>(events.size());
  stored.loss = {batch.loss().cupti_dropped_records(), batch.loss().queue_dropped_events(),
                 batch.loss().spill_dropped_events()};
  stored.payload = std::move(received);

  v1::Ack ack;
  ack.set_sequence(batch.sequence());
  absl::Status st = store_->AppendBatch(stored);
  if (absl::IsAlreadyExists(st)) {
    counters_->Add(counters_->batches_duplicate);
    ack.set_duplicate(true);
    return ack;
  }
  if (!st.ok()) {
    counters_->Add(counters_->storage_errors);
    spdlog::error("process {} batch {}: storing failed: {}", process_id, batch.sequence(),
                  st.ToString());
    return st;
  }
  counters_->Add(counters_->batches_stored);
  if (memory_totals_ != nullptr) memory_totals_->Add(process_id, events, process->batch_count == 0);
  if (versions_ != nullptr) versions_->Note(process_id, stored.min_ns);
  counters_->Add(counters_->events_stored, stored.event_count);
  counters_->Add(counters_->bytes_stored, stored.payload.size());
  if (batch.sequence() < process->max_sequence) {
    counters_->Add(counters_->batches_out_of_order);
  } else if (batch.sequence() > process->max_sequence + 1) {
    counters_->Add(counters_->sequence_gaps, batch.sequence() - process->max_sequence - 1);
  }

  {
    std::shared_lock lock((*entry)->mu);
    if (absl::Status idx = IndexSteps(*process, events, (*entry)->dict.strings()); !idx.ok()) {
      // The batch is stored; a failed step index only delays reports, so do not fail the ack.
      spdlog::warn("process {} batch {}: step index failed: {}", process_id, batch.sequence(),
                   idx.ToString());
    }
  }
  return ack;
}

}  // namespace gpuspy::collector
