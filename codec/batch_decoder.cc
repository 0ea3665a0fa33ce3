// One decoder for all fifteen columns, each validated the same way (lengths, refs, enums): kept in
// one file so that a rule added for one column is seen beside the others (464 lines).
#include "codec/batch_decoder.h"

#include "absl/strings/string_view.h"

#include "absl/strings/str_cat.h"
#include "codec/packing.h"

namespace gpuspy {
namespace {

// Running sum of a delta column; unsigned so hostile deltas wrap instead of overflowing (UB).
class Accumulator {
 public:
  explicit Accumulator(int64_t base) : value_(static_cast<uint64_t>(base)) {}
  int64_t Add(int64_t delta) {
    value_ += static_cast<uint64_t>(delta);
    return static_cast<int64_t>(value_);
  }

 private:
  uint64_t value_;
};

int64_t EndOf(int64_t start, uint64_t duration) {
  return static_cast<int64_t>(static_cast<uint64_t>(start) + duration);
}

// Checks that every listed column has `n` entries, or is optional and empty.
class ColumnCheck {
 public:
  ColumnCheck(absl::string_view kind, int n) : kind_(kind), n_(n) {}
  template <typename Column>
  ColumnCheck& Required(absl::string_view name, const Column& c) {
    if (status_.ok() && c.size() != n_) Fail(name, c.size());
    return *this;
  }
  template <typename Column>
  ColumnCheck& Optional(absl::string_view name, const Column& c) {
    if (status_.ok() && !c.empty() && c.size() != n_) Fail(name, c.size());
    return *this;
  }
  absl::Status status() const { return status_; }

 private:
  void Fail(absl::string_view name, int got) {
    status_ = absl::InvalidArgumentError(absl::StrCat(kind_, ".", name, " has ", got,
                                                      " entries, expected ", n_));
  }
  absl::string_view kind_;
  int n_;
  absl::Status status_;
};

absl::Status BadRef(absl::string_view column, int index, uint32_t ref) {
  return absl::InvalidArgumentError(
      absl::StrCat(column, "[", index, "] refers to undefined ref ", ref));
}

// The largest counter reading a batch may carry (CounterSampleEvent: percent of peak).
constexpr float kMaxCounterPercent = 1000.0f;

absl::Status BadValue(absl::string_view column, int index, uint32_t value) {
  return absl::InvalidArgumentError(
      absl::StrCat(column, "[", index, "] has invalid value ", value));
}

class Decoder {
 public:
  Decoder(const v1::EventBatch& b, const ProcessDictionary& d) : b_(b), d_(d) {}

  absl::Status Run(EventColumns* out) {
    for (auto step : {&Decoder::Kernels, &Decoder::Memcpys, &Decoder::Memsets, &Decoder::Syncs,
                      &Decoder::Memory, &Decoder::Apis, &Decoder::NvtxRanges,
                      &Decoder::NvtxMarks, &Decoder::Overheads, &Decoder::GraphLaunches,
                      &Decoder::ExternalCorrelations, &Decoder::MemoryPools,
                      &Decoder::Collectives, &Decoder::OpWorks, &Decoder::CounterSamples}) {
      if (absl::Status st = (this->*step)(); !st.ok()) return st;
    }
    out->Append(ev_);
    return absl::OkStatus();
  }

 private:
  absl::Status Stream(absl::string_view column, int i, uint32_t ref, StreamKey* out) {
    const StreamKey* s = d_.stream(ref);
    if (s == nullptr) return BadRef(column, i, ref);
    *out = *s;
    return absl::OkStatus();
  }
  absl::Status Thread(absl::string_view column, int i, uint32_t ref, uint32_t* out) {
    const uint32_t* t = d_.thread(ref);
    if (t == nullptr) return BadRef(column, i, ref);
    *out = *t;
    return absl::OkStatus();
  }
  absl::Status String(absl::string_view column, int i, uint32_t ref) {
    return d_.strings().Contains(ref) ? absl::OkStatus() : BadRef(column, i, ref);
  }

  absl::Status Kernels() {
    const auto& c = b_.kernels();
    const int n = c.start_delta_ns_size();
    absl::Status st = ColumnCheck("kernels", n)
                          .Required("duration_ns", c.duration_ns())
                          .Required("correlation_delta", c.correlation_delta())
                          .Required("signature_ref", c.signature_ref())
                          .Required("stream_ref", c.stream_ref())
                          .Optional("graph_id", c.graph_id())
                          .status();
    if (!st.ok()) return st;
    Accumulator start(b_.base_time_ns()), corr(0);
    ev_.kernels.resize(n);
    for (int i = 0; i < n; ++i) {
      KernelEvent& e = ev_.kernels[i];
      e.start_ns = start.Add(c.start_delta_ns(i));
      e.end_ns = EndOf(e.start_ns, c.duration_ns(i));
      e.correlation_id = static_cast<uint64_t>(corr.Add(c.correlation_delta(i)));
      const KernelSignature* sig = d_.signature(c.signature_ref(i));
      if (sig == nullptr) return BadRef("kernels.signature_ref", i, c.signature_ref(i));
      e.name = sig->name;
      e.shape = sig->shape;
      if (st = Stream("kernels.stream_ref", i, c.stream_ref(i), &e.stream); !st.ok()) return st;
      e.graph_id = c.graph_id().empty() ? 0 : c.graph_id(i);
    }
    return absl::OkStatus();
  }

  absl::Status Memcpys() {
    const auto& c = b_.memcpys();
    const int n = c.start_delta_ns_size();
    absl::Status st = ColumnCheck("memcpys", n)
                          .Required("duration_ns", c.duration_ns())
                          .Required("correlation_delta", c.correlation_delta())
                          .Required("stream_ref", c.stream_ref())
                          .Required("bytes", c.bytes())
                          .Required("packed_kinds", c.packed_kinds())
                          .Optional("src_device_id", c.src_device_id())
                          .Optional("dst_device_id", c.dst_device_id())
                          .status();
    if (!st.ok()) return st;
    Accumulator start(b_.base_time_ns()), corr(0);
    ev_.memcpys.resize(n);
    for (int i = 0; i < n; ++i) {
      MemcpyEvent& e = ev_.memcpys[i];
      e.start_ns = start.Add(c.start_delta_ns(i));
      e.end_ns = EndOf(e.start_ns, c.duration_ns(i));
      e.correlation_id = static_cast<uint64_t>(corr.Add(c.correlation_delta(i)));
      if (st = Stream("memcpys.stream_ref", i, c.stream_ref(i), &e.stream); !st.ok()) return st;
      e.bytes = c.bytes(i);
      if (!UnpackMemcpyKinds(c.packed_kinds(i), &e)) {
        return BadValue("memcpys.packed_kinds", i, c.packed_kinds(i));
      }
      e.src_device_id = c.src_device_id().empty() ? e.stream.device_id : c.src_device_id(i);
      e.dst_device_id = c.dst_device_id().empty() ? e.stream.device_id : c.dst_device_id(i);
    }
    return absl::OkStatus();
  }

  absl::Status Memsets() {
    const auto& c = b_.memsets();
    const int n = c.start_delta_ns_size();
    absl::Status st = ColumnCheck("memsets", n)
                          .Required("duration_ns", c.duration_ns())
                          .Required("correlation_delta", c.correlation_delta())
                          .Required("stream_ref", c.stream_ref())
                          .Required("bytes", c.bytes())
                          .Required("value", c.value())
                          .Required("packed_kinds", c.packed_kinds())
                          .status();
    if (!st.ok()) return st;
    Accumulator start(b_.base_time_ns()), corr(0);
    ev_.memsets.resize(n);
    for (int i = 0; i < n; ++i) {
      MemsetEvent& e = ev_.memsets[i];
      e.start_ns = start.Add(c.start_delta_ns(i));
      e.end_ns = EndOf(e.start_ns, c.duration_ns(i));
      e.correlation_id = static_cast<uint64_t>(corr.Add(c.correlation_delta(i)));
      if (st = Stream("memsets.stream_ref", i, c.stream_ref(i), &e.stream); !st.ok()) return st;
      e.bytes = c.bytes(i);
      e.value = c.value(i);
      if (!UnpackMemsetKinds(c.packed_kinds(i), &e)) {
        return BadValue("memsets.packed_kinds", i, c.packed_kinds(i));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Syncs() {
    const auto& c = b_.syncs();
    const int n = c.start_delta_ns_size();
    absl::Status st = ColumnCheck("syncs", n)
                          .Required("duration_ns", c.duration_ns())
                          .Required("correlation_delta", c.correlation_delta())
                          .Required("stream_ref", c.stream_ref())
                          .Required("sync_kind", c.sync_kind())
                          .status();
    if (!st.ok()) return st;
    Accumulator start(b_.base_time_ns()), corr(0);
    ev_.syncs.resize(n);
    for (int i = 0; i < n; ++i) {
      SyncEvent& e = ev_.syncs[i];
      e.start_ns = start.Add(c.start_delta_ns(i));
      e.end_ns = EndOf(e.start_ns, c.duration_ns(i));
      e.correlation_id = static_cast<uint64_t>(corr.Add(c.correlation_delta(i)));
      if (st = Stream("syncs.stream_ref", i, c.stream_ref(i), &e.stream); !st.ok()) return st;
      if (c.sync_kind(i) > kMaxSyncKind) return BadValue("syncs.sync_kind", i, c.sync_kind(i));
      e.sync_kind = static_cast<SyncKind>(c.sync_kind(i));
    }
    return absl::OkStatus();
  }

  absl::Status Memory() {
    const auto& c = b_.memory();
    const int n = c.timestamp_delta_ns_size();
    absl::Status st = ColumnCheck("memory", n)
                          .Required("correlation_delta", c.correlation_delta())
                          .Required("stream_ref", c.stream_ref())
                          .Required("address_delta", c.address_delta())
                          .Required("bytes", c.bytes())
                          .Required("packed_kinds", c.packed_kinds())
                          .status();
    if (!st.ok()) return st;
    Accumulator ts(b_.base_time_ns()), corr(0), addr(0);
    ev_.memory.resize(n);
    for (int i = 0; i < n; ++i) {
      MemoryEvent& e = ev_.memory[i];
      e.timestamp_ns = ts.Add(c.timestamp_delta_ns(i));
      e.correlation_id = static_cast<uint64_t>(corr.Add(c.correlation_delta(i)));
      if (st = Stream("memory.stream_ref", i, c.stream_ref(i), &e.stream); !st.ok()) return st;
      e.address = static_cast<uint64_t>(addr.Add(c.address_delta(i)));
      e.bytes = c.bytes(i);
      if (!UnpackMemoryKinds(c.packed_kinds(i), &e)) {
        return BadValue("memory.packed_kinds", i, c.packed_kinds(i));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Apis() {
    const auto& c = b_.apis();
    const int n = c.start_delta_ns_size();
    absl::Status st = ColumnCheck("apis", n)
                          .Required("duration_ns", c.duration_ns())
                          .Required("correlation_delta", c.correlation_delta())
                          .Required("api_ref", c.api_ref())
                          .Required("thread_ref", c.thread_ref())
                          .Optional("call_site_ref", c.call_site_ref())
                          .status();
    if (!st.ok()) return st;
    Accumulator start(b_.base_time_ns()), corr(0);
    ev_.apis.resize(n);
    for (int i = 0; i < n; ++i) {
      ApiEvent& e = ev_.apis[i];
      e.start_ns = start.Add(c.start_delta_ns(i));
      e.end_ns = EndOf(e.start_ns, c.duration_ns(i));
      e.correlation_id = static_cast<uint64_t>(corr.Add(c.correlation_delta(i)));
      const ApiFunction* fn = d_.api(c.api_ref(i));
      if (fn == nullptr) return BadRef("apis.api_ref", i, c.api_ref(i));
      e.domain = fn->domain;
      e.cbid = fn->cbid;
      e.name = fn->name;
      if (st = Thread("apis.thread_ref", i, c.thread_ref(i), &e.thread_id); !st.ok()) return st;
      if (!c.call_site_ref().empty()) {
        if (st = String("apis.call_site_ref", i, c.call_site_ref(i)); !st.ok()) return st;
        e.call_site = c.call_site_ref(i);
      }
    }
    return absl::OkStatus();
  }

  absl::Status NvtxRanges() {
    const auto& c = b_.nvtx_ranges();
    const int n = c.start_delta_ns_size();
    absl::Status st = ColumnCheck("nvtx_ranges", n)
                          .Required("duration_ns", c.duration_ns())
                          .Required("domain_ref", c.domain_ref())
                          .Required("message_ref", c.message_ref())
                          .Required("thread_ref", c.thread_ref())
                          .Required("depth", c.depth())
                          .status();
    if (!st.ok()) return st;
    Accumulator start(b_.base_time_ns());
    ev_.nvtx_ranges.resize(n);
    for (int i = 0; i < n; ++i) {
      NvtxRangeEvent& e = ev_.nvtx_ranges[i];
      e.start_ns = start.Add(c.start_delta_ns(i));
      e.end_ns = EndOf(e.start_ns, c.duration_ns(i));
      if (st = String("nvtx_ranges.domain_ref", i, c.domain_ref(i)); !st.ok()) return st;
      if (st = String("nvtx_ranges.message_ref", i, c.message_ref(i)); !st.ok()) return st;
      e.domain = c.domain_ref(i);
      e.message = c.message_ref(i);
      if (st = Thread("nvtx_ranges.thread_ref", i, c.thread_ref(i), &e.thread_id); !st.ok()) {
        return st;
      }
      e.depth = c.depth(i);
    }
    return absl::OkStatus();
  }

  absl::Status NvtxMarks() {
    const auto& c = b_.nvtx_marks();
    const int n = c.timestamp_delta_ns_size();
    absl::Status st = ColumnCheck("nvtx_marks", n)
                          .Required("domain_ref", c.domain_ref())
                          .Required("message_ref", c.message_ref())
                          .Required("thread_ref", c.thread_ref())
                          .status();
    if (!st.ok()) return st;
    Accumulator ts(b_.base_time_ns());
    ev_.nvtx_marks.resize(n);
    for (int i = 0; i < n; ++i) {
      NvtxMarkEvent& e = ev_.nvtx_marks[i];
      e.timestamp_ns = ts.Add(c.timestamp_delta_ns(i));
      if (st = String("nvtx_marks.domain_ref", i, c.domain_ref(i)); !st.ok()) return st;
      if (st = String("nvtx_marks.message_ref", i, c.message_ref(i)); !st.ok()) return st;
      e.domain = c.domain_ref(i);
      e.message = c.message_ref(i);
      if (st = Thread("nvtx_marks.thread_ref", i, c.thread_ref(i), &e.thread_id); !st.ok()) {
        return st;
      }
    }
    return absl::OkStatus();
  }

  absl::Status Overheads() {
    const auto& c = b_.overheads();
    const int n = c.start_delta_ns_size();
    absl::Status st = ColumnCheck("overheads", n)
                          .Required("duration_ns", c.duration_ns())
                          .Required("kind_ref", c.kind_ref())
                          .Required("thread_ref", c.thread_ref())
                          .status();
    if (!st.ok()) return st;
    Accumulator start(b_.base_time_ns());
    ev_.overheads.resize(n);
    for (int i = 0; i < n; ++i) {
      OverheadEvent& e = ev_.overheads[i];
      e.start_ns = start.Add(c.start_delta_ns(i));
      e.end_ns = EndOf(e.start_ns, c.duration_ns(i));
      if (st = String("overheads.kind_ref", i, c.kind_ref(i)); !st.ok()) return st;
      e.kind = c.kind_ref(i);
      if (st = Thread("overheads.thread_ref", i, c.thread_ref(i), &e.thread_id); !st.ok()) {
        return st;
      }
    }
    return absl::OkStatus();
  }

  absl::Status GraphLaunches() {
    const auto& c = b_.graph_launches();
    const int n = c.start_delta_ns_size();
    absl::Status st = ColumnCheck("graph_launches", n)
                          .Required("duration_ns", c.duration_ns())
                          .Required("correlation_delta", c.correlation_delta())
                          .Required("stream_ref", c.stream_ref())
                          .Required("graph_id", c.graph_id())
                          .status();
    if (!st.ok()) return st;
    Accumulator start(b_.base_time_ns()), corr(0);
    ev_.graph_launches.resize(n);
    for (int i = 0; i < n; ++i) {
      GraphLaunchEvent& e = ev_.graph_launches[i];
      e.start_ns = start.Add(c.start_delta_ns(i));
      e.end_ns = EndOf(e.start_ns, c.duration_ns(i));
      e.correlation_id = static_cast<uint64_t>(corr.Add(c.correlation_delta(i)));
      if (st = Stream("graph_launches.stream_ref", i, c.stream_ref(i), &e.stream); !st.ok()) {
        return st;
      }
      e.graph_id = c.graph_id(i);
    }
    return absl::OkStatus();
  }

  absl::Status ExternalCorrelations() {
    const auto& c = b_.external_correlations();
    const int n = c.correlation_delta_size();
    absl::Status st = ColumnCheck("external_correlations", n)
                          .Required("external_kind", c.external_kind())
                          .Required("external_id_delta", c.external_id_delta())
                          .status();
    if (!st.ok()) return st;
    Accumulator corr(0), ext(0);
    ev_.external_correlations.resize(n);
    for (int i = 0; i < n; ++i) {
      ExternalCorrelationEvent& e = ev_.external_correlations[i];
      e.correlation_id = static_cast<uint64_t>(corr.Add(c.correlation_delta(i)));
      e.external_kind = c.external_kind(i);
      e.external_id = static_cast<uint64_t>(ext.Add(c.external_id_delta(i)));
    }
    return absl::OkStatus();
  }

  absl::Status MemoryPools() {
    const auto& c = b_.memory_pools();
    const int n = c.timestamp_delta_ns_size();
    absl::Status st = ColumnCheck("memory_pools", n)
                          .Required("correlation_delta", c.correlation_delta())
                          .Required("device_id", c.device_id())
                          .Required("packed_kinds", c.packed_kinds())
                          .Required("address_delta", c.address_delta())
                          .Required("size", c.size())
                          .Required("release_threshold", c.release_threshold())
                          .Required("utilized_bytes", c.utilized_bytes())
                          .status();
    if (!st.ok()) return st;
    Accumulator ts(b_.base_time_ns()), corr(0), addr(0);
    ev_.memory_pools.resize(n);
    for (int i = 0; i < n; ++i) {
      MemoryPoolEvent& e = ev_.memory_pools[i];
      e.timestamp_ns = ts.Add(c.timestamp_delta_ns(i));
      e.correlation_id = static_cast<uint64_t>(corr.Add(c.correlation_delta(i)));
      e.device_id = c.device_id(i);
      if (!UnpackPoolKinds(c.packed_kinds(i), &e)) {
        return BadValue("memory_pools.packed_kinds", i, c.packed_kinds(i));
      }
      e.address = static_cast<uint64_t>(addr.Add(c.address_delta(i)));
      e.size = c.size(i);
      e.release_threshold = c.release_threshold(i);
      e.utilized_bytes = c.utilized_bytes(i);
    }
    return absl::OkStatus();
  }

  absl::Status Collectives() {
    const auto& c = b_.collectives();
    const int n = c.correlation_delta_size();
    absl::Status st = ColumnCheck("collectives", n)
                          .Required("op_ref", c.op_ref())
                          .Required("dtype_ref", c.dtype_ref())
                          .Required("group_ref", c.group_ref())
                          .Required("in_bytes", c.in_bytes())
                          .Required("out_bytes", c.out_bytes())
                          .Required("group_size", c.group_size())
                          .Required("sequence", c.sequence())
                          .status();
    if (!st.ok()) return st;
    Accumulator corr(0);
    ev_.collectives.resize(n);
    for (int i = 0; i < n; ++i) {
      CollectiveEvent& e = ev_.collectives[i];
      e.correlation_id = static_cast<uint64_t>(corr.Add(c.correlation_delta(i)));
      if (st = String("collectives.op_ref", i, c.op_ref(i)); !st.ok()) return st;
      if (st = String("collectives.dtype_ref", i, c.dtype_ref(i)); !st.ok()) return st;
      if (st = String("collectives.group_ref", i, c.group_ref(i)); !st.ok()) return st;
      e.op = c.op_ref(i);
      e.dtype = c.dtype_ref(i);
      e.group = c.group_ref(i);
      e.in_bytes = c.in_bytes(i);
      e.out_bytes = c.out_bytes(i);
      e.group_size = c.group_size(i);
      e.sequence = c.sequence(i);
    }
    return absl::OkStatus();
  }

  absl::Status OpWorks() {
    const auto& c = b_.op_works();
    const int n = c.start_delta_ns_size();
    absl::Status st = ColumnCheck("op_works", n)
                          .Required("duration_ns", c.duration_ns())
                          .Required("thread_ref", c.thread_ref())
                          .Required("op_ref", c.op_ref())
                          .Required("dtype_ref", c.dtype_ref())
                          .Required("flops", c.flops())
                          .Required("bytes", c.bytes())
                          .Required("source", c.source())
                          .status();
    if (!st.ok()) return st;
    Accumulator start(b_.base_time_ns());
    ev_.op_works.resize(n);
    for (int i = 0; i < n; ++i) {
      OpWorkEvent& e = ev_.op_works[i];
      e.start_ns = start.Add(c.start_delta_ns(i));
      e.end_ns = EndOf(e.start_ns, c.duration_ns(i));
      if (st = Thread("op_works.thread_ref", i, c.thread_ref(i), &e.thread_id); !st.ok()) return st;
      if (st = String("op_works.op_ref", i, c.op_ref(i)); !st.ok()) return st;
      if (st = String("op_works.dtype_ref", i, c.dtype_ref(i)); !st.ok()) return st;
      e.op = c.op_ref(i);
      e.dtype = c.dtype_ref(i);
      e.flops = c.flops(i);
      e.bytes = c.bytes(i);
      if (c.source(i) > static_cast<uint32_t>(WorkSource::kInputShapes)) {
        return BadValue("op_works.source", i, c.source(i));
      }
      e.source = static_cast<WorkSource>(c.source(i));
    }
    return absl::OkStatus();
  }

  absl::Status CounterSamples() {
    const auto& c = b_.counter_samples();
    const int n = c.start_delta_ns_size();
    absl::Status st = ColumnCheck("counter_samples", n)
                          .Required("duration_ns", c.duration_ns())
                          .Required("device_id", c.device_id())
                          .Required("tensor_active_pct", c.tensor_active_pct())
                          .Required("dram_throughput_pct", c.dram_throughput_pct())
                          .Required("sm_active_pct", c.sm_active_pct())
                          .Required("gpu_active_pct", c.gpu_active_pct())
                          .status();
    if (!st.ok()) return st;
    Accumulator start(b_.base_time_ns());
    ev_.counter_samples.resize(n);
    for (int i = 0; i < n; ++i) {
      CounterSampleEvent& e = ev_.counter_samples[i];
      e.start_ns = start.Add(c.start_delta_ns(i));
      e.end_ns = EndOf(e.start_ns, c.duration_ns(i));
      e.device_id = c.device_id(i);
      const std::pair<const char*, float*> values[] = {
          {"counter_samples.tensor_active_pct", &e.tensor_active_pct},
          {"counter_samples.dram_throughput_pct", &e.dram_throughput_pct},
          {"counter_samples.sm_active_pct", &e.sm_active_pct},
          {"counter_samples.gpu_active_pct", &e.gpu_active_pct}};
      const float read[] = {c.tensor_active_pct(i), c.dram_throughput_pct(i), c.sm_active_pct(i),
                            c.gpu_active_pct(i)};
      for (size_t k = 0; k < 4; ++k) {
        // A percent of peak: counters overshoot 100 a little, never by 10x; NaN is no reading.
        if (!(read[k] <= kMaxCounterPercent)) {
          return absl::InvalidArgumentError(absl::StrCat(values[k].first, "[", i,
                                                         "] is not a percent: ", read[k]));
        }
        *values[k].second = read[k] < 0 ? -1.0f : read[k];
      }
    }
    return absl::OkStatus();
  }

  const v1::EventBatch& b_;
  const ProcessDictionary& d_;
  EventColumns ev_;
};

}  // namespace

absl::Status DecodeBatch(const v1::EventBatch& batch, const ProcessDictionary& dict,
                         EventColumns* out) {
  return Decoder(batch, dict).Run(out);
}

}  // namespace gpuspy
