// Sends a finished set of events (a replayed or imported process) to gpuspyd: Hello, one batch
// per chunk with every acknowledgement awaited, clean close; optionally paced, and resumed across
// collector restarts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuspy/v1/identity.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy {

struct UploadResult {
  uint64_t process_id = 0;  // the collector's id for the process (Welcome)
  size_t events = 0;
  size_t batches = 0;
  size_t wire_bytes = 0;
};

struct UploadOptions {
  absl::Duration ack_timeout = absl::Seconds(30);
  // Keep reconnecting this long after a failure (collector restarting); the session resumes after
  // the last batch the collector stored, so nothing is sent twice or skipped. 0 = fail at once.
  absl::Duration retry_for = absl::ZeroDuration();
  // Send one chunk per interval (a live process's pace) instead of as fast as acks come.
  absl::Duration chunk_interval = absl::ZeroDuration();
  // Told each batch sequence the collector acknowledged, as the acknowledgement arrives.
  std::function<void(uint64_t sequence)> on_ack;
  // Host threads' names (OS thread id -> a string of `strings`), sent with their definitions
  // (BatchEncoder::SetThreadNames); null: none.
  const absl::flat_hash_map<uint32_t, StringRef>* thread_names = nullptr;
};

absl::StatusOr<UploadResult> UploadEvents(const std::string& address,
                                          const v1::ProcessIdentity& identity,
                                          const StringTable& strings,
                                          const std::vector<EventColumns>& chunks,
                                          const UploadOptions& options = {});

}  // namespace gpuspy
