#include "codec/batch_event_count.h"

namespace gpuspy {

size_t CountEvents(const v1::EventBatch& b) {
  return b.kernels().start_delta_ns_size() + b.memcpys().start_delta_ns_size() +
         b.memsets().start_delta_ns_size() + b.syncs().start_delta_ns_size() +
         b.memory().timestamp_delta_ns_size() + b.apis().start_delta_ns_size() +
         b.nvtx_ranges().start_delta_ns_size() + b.nvtx_marks().timestamp_delta_ns_size() +
         b.overheads().start_delta_ns_size() + b.graph_launches().start_delta_ns_size() +
         b.external_correlations().correlation_delta_size() +
         b.memory_pools().timestamp_delta_ns_size() + b.collectives().correlation_delta_size() +
         b.op_works().start_delta_ns_size() + b.counter_samples().start_delta_ns_size();
}

}  // namespace gpuspy
