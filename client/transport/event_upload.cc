#include "client/transport/event_upload.h"

#include <algorithm>

#include "absl/time/clock.h"
#include "client/transport/ingest_client.h"
#include "codec/batch_encoder.h"

namespace gpuspy {
namespace {

constexpr absl::Duration kRetryPause = absl::Milliseconds(200);

// After a failure: an overloaded collector's retry hint (with jitter), else a short pause.
absl::Duration PauseAfter(const absl::Status& st) {
  return absl::IsResourceExhausted(st) ? OverloadBackoff(st) : kRetryPause;
}

}  // namespace

absl::StatusOr<UploadResult> UploadEvents(const std::string& address,
                                          const v1::ProcessIdentity& identity,
                                          const StringTable& strings,
                                          const std::vector<EventColumns>& chunks,
                                          const UploadOptions& options) {
  IngestClient client;
  // A collector that is restarting when the upload begins is waited for like one that restarts
  // later (retry_for).
  const absl::Time connect_until = absl::Now() + options.retry_for;
  for (absl::Status st = client.Connect(address, identity, absl::Seconds(5)); !st.ok();
       st = client.Connect(address, identity, absl::Seconds(5))) {
    if (absl::IsInvalidArgument(st) || absl::Now() >= connect_until) return st;
    absl::SleepFor(PauseAfter(st));
  }
  BatchEncoder encoder(&strings);
  encoder.SetThreadNames(options.thread_names);
  UploadResult r;
  // Chunk i is batch base + i + 1: a re-upload continues after what is stored, not duplicates.
  const uint64_t base = client.last_stored_sequence();
  absl::Time give_up = absl::InfiniteFuture();
  absl::Time next_send = absl::Now();
  size_t i = 0;
  std::vector<const EventColumns*> todo;
  for (const EventColumns& c : chunks) {
    if (!c.empty()) todo.push_back(&c);
  }
  while (i < todo.size()) {
    absl::Status st;
    if (!client.connected()) {
      st = client.Connect(address, identity, absl::Seconds(5));
      if (st.ok()) {
        // Resume right after the last batch the collector stored; it may have lost the
        // definitions earlier batches carried (a fresh store), so send them all again.
        i = std::max<uint64_t>(client.last_stored_sequence(), base) - base;
        encoder.ResendAllDefinitions();
        continue;
      }
    } else {
      if (options.chunk_interval > absl::ZeroDuration()) {
        absl::SleepFor(next_send - absl::Now());
        next_send = std::max(next_send + options.chunk_interval, absl::Now());
      }
      v1::EventBatch batch;
      const uint64_t sequence = base + i + 1;
      encoder.Encode(*todo[i], sequence, {}, &batch);
      st = client.Send(batch);
      if (st.ok()) st = client.WaitForAcks(sequence, options.ack_timeout);
      if (st.ok()) {
        if (options.on_ack) options.on_ack(sequence);
        r.wire_bytes += batch.ByteSizeLong();
        ++i;
        give_up = absl::InfiniteFuture();
        continue;
      }
    }
    // Failed: refused batches are final; anything else is retried while retry_for allows.
    if (absl::IsInvalidArgument(st) || options.retry_for <= absl::ZeroDuration()) return st;
    if (give_up == absl::InfiniteFuture()) give_up = absl::Now() + options.retry_for;
    if (absl::Now() >= give_up) return st;
    absl::SleepFor(PauseAfter(st));
  }
  if (absl::Status st = client.Close(); !st.ok()) return st;
  // Every chunk is stored now, including any whose acknowledgement a crash swallowed (the
  // collector's Welcome said it had them, so they were skipped, not sent again).
  r.process_id = client.process_id();
  r.batches = todo.size();
  for (const EventColumns* c : todo) r.events += c->size();
  return r;
}

}  // namespace gpuspy
