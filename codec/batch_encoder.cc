#include "codec/batch_encoder.h"

#include "codec/packing.h"

namespace gpuspy {
namespace {

// Delta against the previous value of the same column; the first value against `base`.
class DeltaColumn {
 public:
  explicit DeltaColumn(int64_t base) : prev_(base) {}
  int64_t Next(int64_t value) {
    // Unsigned arithmetic: wrap-around is defined, and the decoder undoes it exactly.
    const int64_t delta =
        static_cast<int64_t>(static_cast<uint64_t>(value) - static_cast<uint64_t>(prev_));
    prev_ = value;
    return delta;
  }

 private:
  int64_t prev_;
};

uint64_t Duration(int64_t start, int64_t end) {
  return static_cast<uint64_t>(end) - static_cast<uint64_t>(start);
}

}  // namespace

uint32_t BatchEncoder::SignatureRef(StringRef name, const LaunchShape& shape) {
  SignatureKey key{name, shape};
  auto [it, inserted] = signature_refs_.try_emplace(key, signatures_.size() + 1);
  if (inserted) signatures_.push_back(key);
  return it->second;
}

uint32_t BatchEncoder::StreamRef(const StreamKey& s) {
  auto [it, inserted] =
      stream_refs_.try_emplace(StreamTuple{s.device_id, s.context_id, s.stream_id},
                               streams_.size() + 1);
  if (inserted) streams_.push_back(s);
  return it->second;
}

uint32_t BatchEncoder::ThreadRef(uint32_t os_thread_id) {
  auto [it, inserted] = thread_refs_.try_emplace(os_thread_id, threads_.size() + 1);
  if (inserted) threads_.push_back(os_thread_id);
  return it->second;
}

uint32_t BatchEncoder::ApiRef(ApiDomain domain, uint32_t cbid, StringRef name) {
  ApiTuple key{static_cast<uint8_t>(domain), cbid, name};
  auto [it, inserted] = api_refs_.try_emplace(key, apis_.size() + 1);
  if (inserted) apis_.push_back(key);
  return it->second;
}

void BatchEncoder::ResendAllDefinitions() {
  strings_sent_ = 0;
  signatures_sent_ = 0;
  streams_sent_ = 0;
  threads_sent_ = 0;
  apis_sent_ = 0;
}

void BatchEncoder::EmitNewDefinitions(v1::Dictionary* out) {
  for (; strings_sent_ < strings_->size(); ++strings_sent_) {
    auto [ref, value] = strings_->Entry(strings_sent_);
    auto* def = out->add_strings();
    def->set_ref(ref);
    def->set_value(std::string(value));
  }
  for (; signatures_sent_ < signatures_.size(); ++signatures_sent_) {
    const SignatureKey& k = signatures_[signatures_sent_];
    auto* def = out->add_kernel_signatures();
    def->set_ref(signatures_sent_ + 1);
    def->set_name_ref(k.name);
    def->set_grid_x(k.shape.grid_x);
    def->set_grid_y(k.shape.grid_y);
    def->set_grid_z(k.shape.grid_z);
    def->set_block_x(k.shape.block_x);
    def->set_block_y(k.shape.block_y);
    def->set_block_z(k.shape.block_z);
    def->set_registers_per_thread(k.shape.registers_per_thread);
    def->set_static_shared_bytes(k.shape.static_shared_bytes);
    def->set_dynamic_shared_bytes(k.shape.dynamic_shared_bytes);
  }
  for (; streams_sent_ < streams_.size(); ++streams_sent_) {
    const StreamKey& s = streams_[streams_sent_];
    auto* def = out->add_streams();
    def->set_ref(streams_sent_ + 1);
    def->set_device_id(s.device_id);
    def->set_context_id(s.context_id);
    def->set_stream_id(s.stream_id);
  }
  for (; threads_sent_ < threads_.size(); ++threads_sent_) {
    auto* def = out->add_threads();
    def->set_ref(threads_sent_ + 1);
    def->set_os_thread_id(threads_[threads_sent_]);
    if (thread_names_ != nullptr) {
      if (auto name = thread_names_->find(threads_[threads_sent_]); name != thread_names_->end()) {
        def->set_name_ref(name->second);
      }
    }
  }
  for (; apis_sent_ < apis_.size(); ++apis_sent_) {
    const auto& [domain, cbid, name] = apis_[apis_sent_];
    auto* def = out->add_apis();
    def->set_ref(apis_sent_ + 1);
    def->set_domain(static_cast<v1::ApiDomain>(domain));
    def->set_cbid(cbid);
    def->set_name_ref(name);
  }
}

void BatchEncoder::Encode(const EventColumns& ev, uint64_t sequence, const LossCounters& loss,
                          v1::EventBatch* out) {
  out->Clear();
  out->set_sequence(sequence);
  const int64_t base = ev.empty() ? 0 : ev.TimeRange().first;
  out->set_base_time_ns(base);

  if (!ev.kernels.empty()) {
    auto* c = out->mutable_kernels();
    DeltaColumn start(base), corr(0);
    bool any_graph = false;
    for (const auto& e : ev.kernels) any_graph |= e.graph_id != 0;
    for (const auto& e : ev.kernels) {
      c->add_start_delta_ns(start.Next(e.start_ns));
      c->add_duration_ns(Duration(e.start_ns, e.end_ns));
      c->add_correlation_delta(corr.Next(static_cast<int64_t>(e.correlation_id)));
      c->add_signature_ref(SignatureRef(e.name, e.shape));
      c->add_stream_ref(StreamRef(e.stream));
      if (any_graph) c->add_graph_id(e.graph_id);
    }
  }
  if (!ev.memcpys.empty()) {
    auto* c = out->mutable_memcpys();
    DeltaColumn start(base), corr(0);
    bool any_peer = false;
    for (const auto& e : ev.memcpys) {
      any_peer |= e.src_device_id != e.stream.device_id || e.dst_device_id != e.stream.device_id;
    }
    for (const auto& e : ev.memcpys) {
      c->add_start_delta_ns(start.Next(e.start_ns));
      c->add_duration_ns(Duration(e.start_ns, e.end_ns));
      c->add_correlation_delta(corr.Next(static_cast<int64_t>(e.correlation_id)));
      c->add_stream_ref(StreamRef(e.stream));
      c->add_bytes(e.bytes);
      c->add_packed_kinds(PackMemcpyKinds(e));
      if (any_peer) {
        c->add_src_device_id(e.src_device_id);
        c->add_dst_device_id(e.dst_device_id);
      }
    }
  }
  if (!ev.memsets.empty()) {
    auto* c = out->mutable_memsets();
    DeltaColumn start(base), corr(0);
    for (const auto& e : ev.memsets) {
      c->add_start_delta_ns(start.Next(e.start_ns));
      c->add_duration_ns(Duration(e.start_ns, e.end_ns));
      c->add_correlation_delta(corr.Next(static_cast<int64_t>(e.correlation_id)));
      c->add_stream_ref(StreamRef(e.stream));
      c->add_bytes(e.bytes);
      c->add_value(e.value);
      c->add_packed_kinds(PackMemsetKinds(e));
    }
  }
  if (!ev.syncs.empty()) {
    auto* c = out->mutable_syncs();
    DeltaColumn start(base), corr(0);
    for (const auto& e : ev.syncs) {
      c->add_start_delta_ns(start.Next(e.start_ns));
      c->add_duration_ns(Duration(e.start_ns, e.end_ns));
      c->add_correlation_delta(corr.Next(static_cast<int64_t>(e.correlation_id)));
      c->add_stream_ref(StreamRef(e.stream));
      c->add_sync_kind(static_cast<uint32_t>(e.sync_kind));
    }
  }
  if (!ev.memory.empty()) {
    auto* c = out->mutable_memory();
    DeltaColumn ts(base), corr(0), addr(0);
    for (const auto& e : ev.memory) {
      c->add_timestamp_delta_ns(ts.Next(e.timestamp_ns));
      c->add_correlation_delta(corr.Next(static_cast<int64_t>(e.correlation_id)));
      c->add_stream_ref(StreamRef(e.stream));
      c->add_address_delta(addr.Next(static_cast<int64_t>(e.address)));
      c->add_bytes(e.bytes);
      c->add_packed_kinds(PackMemoryKinds(e));
    }
  }
  if (!ev.apis.empty()) {
    auto* c = out->mutable_apis();
    DeltaColumn start(base), corr(0);
    bool any_site = false;
    for (const auto& e : ev.apis) any_site |= e.call_site != 0;
    for (const auto& e : ev.apis) {
      c->add_start_delta_ns(start.Next(e.start_ns));
      c->add_duration_ns(Duration(e.start_ns, e.end_ns));
      c->add_correlation_delta(corr.Next(static_cast<int64_t>(e.correlation_id)));
      c->add_api_ref(ApiRef(e.domain, e.cbid, e.name));
      c->add_thread_ref(ThreadRef(e.thread_id));
      if (any_site) c->add_call_site_ref(e.call_site);
    }
  }
  if (!ev.nvtx_ranges.empty()) {
    auto* c = out->mutable_nvtx_ranges();
    DeltaColumn start(base);
    for (const auto& e : ev.nvtx_ranges) {
      c->add_start_delta_ns(start.Next(e.start_ns));
      c->add_duration_ns(Duration(e.start_ns, e.end_ns));
      c->add_domain_ref(e.domain);
      c->add_message_ref(e.message);
      c->add_thread_ref(ThreadRef(e.thread_id));
      c->add_depth(e.depth);
    }
  }
  if (!ev.nvtx_marks.empty()) {
    auto* c = out->mutable_nvtx_marks();
    DeltaColumn ts(base);
    for (const auto& e : ev.nvtx_marks) {
      c->add_timestamp_delta_ns(ts.Next(e.timestamp_ns));
      c->add_domain_ref(e.domain);
      c->add_message_ref(e.message);
      c->add_thread_ref(ThreadRef(e.thread_id));
    }
  }
  if (!ev.overheads.empty()) {
    auto* c = out->mutable_overheads();
    DeltaColumn start(base);
    for (const auto& e : ev.overheads) {
      c->add_start_delta_ns(start.Next(e.start_ns));
      c->add_duration_ns(Duration(e.start_ns, e.end_ns));
      c->add_kind_ref(e.kind);
      c->add_thread_ref(ThreadRef(e.thread_id));
    }
  }
  if (!ev.graph_launches.empty()) {
    auto* c = out->mutable_graph_launches();
    DeltaColumn start(base), corr(0);
    for (const auto& e : ev.graph_launches) {
      c->add_start_delta_ns(start.Next(e.start_ns));
      c->add_duration_ns(Duration(e.start_ns, e.end_ns));
      c->add_correlation_delta(corr.Next(static_cast<int64_t>(e.correlation_id)));
      c->add_stream_ref(StreamRef(e.stream));
      c->add_graph_id(e.graph_id);
    }
  }
  if (!ev.external_correlations.empty()) {
    auto* c = out->mutable_external_correlations();
    DeltaColumn corr(0), ext(0);
    for (const auto& e : ev.external_correlations) {
      c->add_correlation_delta(corr.Next(static_cast<int64_t>(e.correlation_id)));
      c->add_external_kind(e.external_kind);
      c->add_external_id_delta(ext.Next(static_cast<int64_t>(e.external_id)));
    }
  }
  if (!ev.memory_pools.empty()) {
    auto* c = out->mutable_memory_pools();
    DeltaColumn ts(base), corr(0), addr(0);
    for (const auto& e : ev.memory_pools) {
      c->add_timestamp_delta_ns(ts.Next(e.timestamp_ns));
      c->add_correlation_delta(corr.Next(static_cast<int64_t>(e.correlation_id)));
      c->add_device_id(e.device_id);
      c->add_packed_kinds(PackPoolKinds(e));
      c->add_address_delta(addr.Next(static_cast<int64_t>(e.address)));
      c->add_size(e.size);
      c->add_release_threshold(e.release_threshold);
      c->add_utilized_bytes(e.utilized_bytes);
    }
  }
  if (!ev.collectives.empty()) {
    auto* c = out->mutable_collectives();
    DeltaColumn corr(0);
    for (const auto& e : ev.collectives) {
      c->add_correlation_delta(corr.Next(static_cast<int64_t>(e.correlation_id)));
      c->add_op_ref(e.op);
      c->add_dtype_ref(e.dtype);
      c->add_group_ref(e.group);
      c->add_in_bytes(e.in_bytes);
      c->add_out_bytes(e.out_bytes);
      c->add_group_size(e.group_size);
      c->add_sequence(e.sequence);
    }
  }
  if (!ev.op_works.empty()) {
    auto* c = out->mutable_op_works();
    DeltaColumn start(base);
    for (const auto& e : ev.op_works) {
      c->add_start_delta_ns(start.Next(e.start_ns));
      c->add_duration_ns(Duration(e.start_ns, e.end_ns));
      c->add_thread_ref(ThreadRef(e.thread_id));
      c->add_op_ref(e.op);
      c->add_dtype_ref(e.dtype);
      c->add_flops(e.flops);
      c->add_bytes(e.bytes);
      c->add_source(static_cast<uint32_t>(e.source));
    }
  }
  if (!ev.counter_samples.empty()) {
    auto* c = out->mutable_counter_samples();
    DeltaColumn start(base);
    for (const auto& e : ev.counter_samples) {
      c->add_start_delta_ns(start.Next(e.start_ns));
      c->add_duration_ns(Duration(e.start_ns, e.end_ns));
      c->add_device_id(e.device_id);
      c->add_tensor_active_pct(e.tensor_active_pct);
      c->add_dram_throughput_pct(e.dram_throughput_pct);
      c->add_sm_active_pct(e.sm_active_pct);
      c->add_gpu_active_pct(e.gpu_active_pct);
    }
  }
  if (loss.total() > 0) {
    auto* l = out->mutable_loss();
    l->set_cupti_dropped_records(loss.cupti_dropped_records);
    l->set_queue_dropped_events(loss.queue_dropped_events);
    l->set_spill_dropped_events(loss.spill_dropped_events);
  }
  // Definitions last: the columns above may have introduced new signatures/streams/threads.
  EmitNewDefinitions(out->mutable_dictionary());
  if (out->dictionary().ByteSizeLong() == 0) out->clear_dictionary();
}

}  // namespace gpuspy
