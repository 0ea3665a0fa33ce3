#include "inject/transport/event_upload.h"

#include "codec/batch_encoder.h"
#include "inject/transport/ingest_client.h"

namespace gpuspy {

absl::StatusOr<UploadResult> UploadEvents(const std::string& address,
                                          const v1::ProcessIdentity& identity,
                                          const StringTable& strings,
                                          const std::vector<EventColumns>& chunks,
                                          absl::Duration ack_timeout) {
  IngestClient client;
  if (absl::Status st = client.Connect(address, identity, absl::Seconds(5)); !st.ok()) return st;
  BatchEncoder encoder(&strings);
  UploadResult r;
  uint64_t sequence = client.last_stored_sequence();  // a re-upload continues, not duplicates
  for (const EventColumns& chunk : chunks) {
    if (chunk.empty()) continue;
    v1::EventBatch batch;
    encoder.Encode(chunk, ++sequence, {}, &batch);
    r.events += chunk.size();
    r.wire_bytes += batch.ByteSizeLong();
    ++r.batches;
    if (absl::Status st = client.Send(batch); !st.ok()) return st;
    if (absl::Status st = client.WaitForAcks(sequence, ack_timeout); !st.ok()) return st;
  }
  if (absl::Status st = client.Close(); !st.ok()) return st;
  return r;
}

}  // namespace gpuspy
