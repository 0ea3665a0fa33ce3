#include "collector/live/ingest_counters.h"

namespace gpuspy::collector {

void IngestCounters::FillProto(v1::CollectorStats* out) const {
  auto get = [](const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  out->set_batches_received(get(batches_received));
  out->set_batches_stored(get(batches_stored));
  out->set_batches_duplicate(get(batches_duplicate));
  out->set_batches_rejected(get(batches_rejected));
  out->set_batches_out_of_order(get(batches_out_of_order));
  out->set_sequence_gaps(get(sequence_gaps));
  out->set_events_stored(get(events_stored));
  out->set_bytes_stored(get(bytes_stored));
  out->set_streams_open(get(streams_open));
  out->set_streams_aborted(get(streams_aborted));
  out->set_storage_errors(get(storage_errors));
  out->set_ingest_streams_refused(get(ingest_streams_refused));
  out->set_ingest_batches_refused(get(ingest_batches_refused));
  out->set_ingest_batches_deferred(get(ingest_batches_deferred));
  out->set_ingest_bytes_in_flight(get(ingest_bytes_in_flight));
  out->set_ingest_peak_bytes_in_flight(get(ingest_peak_bytes_in_flight));
  out->set_ingest_memory_budget_bytes(get(ingest_memory_budget_bytes));
  out->set_max_ingest_streams(get(max_ingest_streams));
}

}  // namespace gpuspy::collector
