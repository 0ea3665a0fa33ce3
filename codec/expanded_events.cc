#include "codec/expanded_events.h"

#include <algorithm>
#include <string>


namespace gpuspy {
namespace {

void SetStream(const StreamKey& s, v1::StreamRef* out) {
  out->set_device_id(s.device_id);
  out->set_context_id(s.context_id);
  out->set_stream_id(s.stream_id);
}

StreamKey GetStream(const v1::StreamRef& s) {
  return {s.device_id(), s.context_id(), s.stream_id()};
}

std::string Str(const StringTable& t, StringRef ref) { return std::string(t.Get(ref)); }

}  // namespace

void ToExpandedEvents(const EventColumns& ev, const StringTable& t, std::vector<v1::Event>* out) {
  const size_t first = out->size();
  out->reserve(first + ev.size());
  for (const auto& e : ev.kernels) {
    auto* k = out->emplace_back().mutable_kernel();
    k->set_start_ns(e.start_ns);
    k->set_end_ns(e.end_ns);
    k->set_correlation_id(e.correlation_id);
    k->set_name(Str(t, e.name));
    SetStream(e.stream, k->mutable_stream());
    k->set_grid_x(e.shape.grid_x);
    k->set_grid_y(e.shape.grid_y);
    k->set_grid_z(e.shape.grid_z);
    k->set_block_x(e.shape.block_x);
    k->set_block_y(e.shape.block_y);
    k->set_block_z(e.shape.block_z);
    k->set_registers_per_thread(e.shape.registers_per_thread);
    k->set_static_shared_bytes(e.shape.static_shared_bytes);
    k->set_dynamic_shared_bytes(e.shape.dynamic_shared_bytes);
    k->set_graph_id(e.graph_id);
  }
  for (const auto& e : ev.memcpys) {
    auto* m = out->emplace_back().mutable_memcpy();
    m->set_start_ns(e.start_ns);
    m->set_end_ns(e.end_ns);
    m->set_correlation_id(e.correlation_id);
    SetStream(e.stream, m->mutable_stream());
    m->set_copy_kind(static_cast<v1::CopyKind>(e.copy_kind));
    m->set_src_kind(static_cast<v1::MemoryKind>(e.src_kind));
    m->set_dst_kind(static_cast<v1::MemoryKind>(e.dst_kind));
    m->set_bytes(e.bytes);
    m->set_async(e.async);
    m->set_src_device_id(e.src_device_id);
    m->set_dst_device_id(e.dst_device_id);
  }
  for (const auto& e : ev.memsets) {
    auto* m = out->emplace_back().mutable_memset();
    m->set_start_ns(e.start_ns);
    m->set_end_ns(e.end_ns);
    m->set_correlation_id(e.correlation_id);
    SetStream(e.stream, m->mutable_stream());
    m->set_memory_kind(static_cast<v1::MemoryKind>(e.memory_kind));
    m->set_bytes(e.bytes);
    m->set_value(e.value);
    m->set_async(e.async);
  }
  for (const auto& e : ev.syncs) {
    auto* s = out->emplace_back().mutable_sync();
    s->set_start_ns(e.start_ns);
    s->set_end_ns(e.end_ns);
    s->set_correlation_id(e.correlation_id);
    SetStream(e.stream, s->mutable_stream());
    s->set_sync_kind(static_cast<v1::SyncKind>(e.sync_kind));
  }
  for (const auto& e : ev.memory) {
    auto* m = out->emplace_back().mutable_memory();
    m->set_timestamp_ns(e.timestamp_ns);
    m->set_correlation_id(e.correlation_id);
    m->set_op(static_cast<v1::MemoryOpKind>(e.op));
    m->set_address(e.address);
    m->set_bytes(e.bytes);
    SetStream(e.stream, m->mutable_stream());
    m->set_memory_kind(static_cast<v1::MemoryKind>(e.memory_kind));
    m->set_from_pool(e.from_pool);
  }
  for (const auto& e : ev.apis) {
    auto* a = out->emplace_back().mutable_api();
    a->set_start_ns(e.start_ns);
    a->set_end_ns(e.end_ns);
    a->set_correlation_id(e.correlation_id);
    a->set_domain(static_cast<v1::ApiDomain>(e.domain));
    a->set_cbid(e.cbid);
    a->set_name(Str(t, e.name));
    a->set_thread_id(e.thread_id);
    a->set_call_site(Str(t, e.call_site));
  }
  for (const auto& e : ev.nvtx_ranges) {
    auto* r = out->emplace_back().mutable_nvtx_range();
    r->set_start_ns(e.start_ns);
    r->set_end_ns(e.end_ns);
    r->set_domain(Str(t, e.domain));
    r->set_message(Str(t, e.message));
    r->set_thread_id(e.thread_id);
    r->set_depth(e.depth);
  }
  for (const auto& e : ev.nvtx_marks) {
    auto* m = out->emplace_back().mutable_nvtx_mark();
    m->set_timestamp_ns(e.timestamp_ns);
    m->set_domain(Str(t, e.domain));
    m->set_message(Str(t, e.message));
    m->set_thread_id(e.thread_id);
  }
  for (const auto& e : ev.overheads) {
    auto* o = out->emplace_back().mutable_overhead();
    o->set_start_ns(e.start_ns);
    o->set_end_ns(e.end_ns);
    o->set_kind(Str(t, e.kind));
    o->set_thread_id(e.thread_id);
  }
  for (const auto& e : ev.graph_launches) {
    auto* g = out->emplace_back().mutable_graph_launch();
    g->set_start_ns(e.start_ns);
    g->set_end_ns(e.end_ns);
    g->set_correlation_id(e.correlation_id);
    SetStream(e.stream, g->mutable_stream());
    g->set_graph_id(e.graph_id);
  }
  for (const auto& e : ev.external_correlations) {
    auto* x = out->emplace_back().mutable_external_correlation();
    x->set_correlation_id(e.correlation_id);
    x->set_external_kind(e.external_kind);
    x->set_external_id(e.external_id);
  }
  for (const auto& e : ev.memory_pools) {
    auto* m = out->emplace_back().mutable_memory_pool();
    m->set_timestamp_ns(e.timestamp_ns);
    m->set_correlation_id(e.correlation_id);
    m->set_device_id(e.device_id);
    m->set_op(static_cast<v1::MemoryPoolOp>(e.op));
    m->set_managed(e.managed);
    m->set_address(e.address);
    m->set_size(e.size);
    m->set_release_threshold(e.release_threshold);
    m->set_utilized_bytes(e.utilized_bytes);
  }
  for (const auto& e : ev.collectives) {
    auto* c = out->emplace_back().mutable_collective();
    c->set_correlation_id(e.correlation_id);
    c->set_op(Str(t, e.op));
    c->set_dtype(Str(t, e.dtype));
    c->set_group(Str(t, e.group));
    c->set_in_bytes(e.in_bytes);
    c->set_out_bytes(e.out_bytes);
    c->set_group_size(e.group_size);
    c->set_sequence(e.sequence);
  }
  for (const auto& e : ev.op_works) {
    auto* w = out->emplace_back().mutable_op_work();
    w->set_start_ns(e.start_ns);
    w->set_end_ns(e.end_ns);
    w->set_thread_id(e.thread_id);
    w->set_op(Str(t, e.op));
    w->set_dtype(Str(t, e.dtype));
    w->set_flops(e.flops);
    w->set_bytes(e.bytes);
    w->set_source(static_cast<v1::WorkSource>(e.source));
  }
  for (const auto& e : ev.counter_samples) {
    auto* c = out->emplace_back().mutable_counter_sample();
    c->set_start_ns(e.start_ns);
    c->set_end_ns(e.end_ns);
    c->set_device_id(e.device_id);
    c->set_tensor_active_pct(e.tensor_active_pct);
    c->set_dram_throughput_pct(e.dram_throughput_pct);
    c->set_sm_active_pct(e.sm_active_pct);
    c->set_gpu_active_pct(e.gpu_active_pct);
  }
  std::stable_sort(out->begin() + first, out->end(),
                   [](const v1::Event& a, const v1::Event& b) { return StartOf(a) < StartOf(b); });
}

int64_t StartOf(const v1::Event& e) {
  switch (e.kind_case()) {
    case v1::Event::kKernel: return e.kernel().start_ns();
    case v1::Event::kMemcpy: return e.memcpy().start_ns();
    case v1::Event::kMemset: return e.memset().start_ns();
    case v1::Event::kSync: return e.sync().start_ns();
    case v1::Event::kMemory: return e.memory().timestamp_ns();
    case v1::Event::kApi: return e.api().start_ns();
    case v1::Event::kNvtxRange: return e.nvtx_range().start_ns();
    case v1::Event::kNvtxMark: return e.nvtx_mark().timestamp_ns();
    case v1::Event::kOverhead: return e.overhead().start_ns();
    case v1::Event::kGraphLaunch: return e.graph_launch().start_ns();
    case v1::Event::kExternalCorrelation: return 0;
    case v1::Event::kCollective: return 0;  // untimed: its kernel has the time
    case v1::Event::kMemoryPool: return e.memory_pool().timestamp_ns();
    case v1::Event::kOpWork: return e.op_work().start_ns();
    case v1::Event::kCounterSample: return e.counter_sample().start_ns();
    case v1::Event::KIND_NOT_SET: return 0;
  }
  return 0;
}

int64_t EndOf(const v1::Event& e) {
  switch (e.kind_case()) {
    case v1::Event::kKernel: return e.kernel().end_ns();
    case v1::Event::kMemcpy: return e.memcpy().end_ns();
    case v1::Event::kMemset: return e.memset().end_ns();
    case v1::Event::kSync: return e.sync().end_ns();
    case v1::Event::kMemory: return e.memory().timestamp_ns();
    case v1::Event::kApi: return e.api().end_ns();
    case v1::Event::kNvtxRange: return e.nvtx_range().end_ns();
    case v1::Event::kNvtxMark: return e.nvtx_mark().timestamp_ns();
    case v1::Event::kOverhead: return e.overhead().end_ns();
    case v1::Event::kGraphLaunch: return e.graph_launch().end_ns();
    case v1::Event::kExternalCorrelation: return 0;
    case v1::Event::kCollective: return 0;
    case v1::Event::kMemoryPool: return e.memory_pool().timestamp_ns();
    case v1::Event::kOpWork: return e.op_work().end_ns();
    case v1::Event::kCounterSample: return e.counter_sample().end_ns();
    case v1::Event::KIND_NOT_SET: return 0;
  }
  return 0;
}

void FromExpandedEvent(const v1::Event& ev, StringTable* t, EventColumns* out) {
  switch (ev.kind_case()) {
    case v1::Event::kKernel: {
      const auto& k = ev.kernel();
      out->kernels.push_back(KernelEvent{
          k.start_ns(), k.end_ns(), k.correlation_id(), t->Intern(k.name()), GetStream(k.stream()),
          LaunchShape{k.grid_x(), k.grid_y(), k.grid_z(), k.block_x(), k.block_y(), k.block_z(),
                      k.registers_per_thread(), k.static_shared_bytes(),
                      k.dynamic_shared_bytes()},
          k.graph_id()});
      break;
    }
    case v1::Event::kMemcpy: {
      const auto& m = ev.memcpy();
      out->memcpys.push_back(MemcpyEvent{
          m.start_ns(), m.end_ns(), m.correlation_id(), GetStream(m.stream()),
          static_cast<CopyKind>(m.copy_kind()), static_cast<MemoryKind>(m.src_kind()),
          static_cast<MemoryKind>(m.dst_kind()), m.async(), m.bytes(), m.src_device_id(),
          m.dst_device_id()});
      break;
    }
    case v1::Event::kMemset: {
      const auto& m = ev.memset();
      out->memsets.push_back(MemsetEvent{m.start_ns(), m.end_ns(), m.correlation_id(),
                                         GetStream(m.stream()),
                                         static_cast<MemoryKind>(m.memory_kind()), m.async(),
                                         m.bytes(), m.value()});
      break;
    }
    case v1::Event::kSync: {
      const auto& s = ev.sync();
      out->syncs.push_back(SyncEvent{s.start_ns(), s.end_ns(), s.correlation_id(),
                                     GetStream(s.stream()),
                                     static_cast<SyncKind>(s.sync_kind())});
      break;
    }
    case v1::Event::kMemory: {
      const auto& m = ev.memory();
      out->memory.push_back(MemoryEvent{m.timestamp_ns(), m.correlation_id(),
                                        GetStream(m.stream()), static_cast<MemoryOpKind>(m.op()),
                                        static_cast<MemoryKind>(m.memory_kind()), m.from_pool(),
                                        m.address(), m.bytes()});
      break;
    }
    case v1::Event::kApi: {
      const auto& a = ev.api();
      out->apis.push_back(ApiEvent{a.start_ns(), a.end_ns(), a.correlation_id(),
                                   static_cast<ApiDomain>(a.domain()), a.cbid(),
                                   t->Intern(a.name()), a.thread_id(), t->Intern(a.call_site())});
      break;
    }
    case v1::Event::kNvtxRange: {
      const auto& r = ev.nvtx_range();
      out->nvtx_ranges.push_back(NvtxRangeEvent{r.start_ns(), r.end_ns(), t->Intern(r.domain()),
                                                t->Intern(r.message()), r.thread_id(),
                                                r.depth()});
      break;
    }
    case v1::Event::kNvtxMark: {
      const auto& m = ev.nvtx_mark();
      out->nvtx_marks.push_back(NvtxMarkEvent{m.timestamp_ns(), t->Intern(m.domain()),
                                              t->Intern(m.message()), m.thread_id()});
      break;
    }
    case v1::Event::kOverhead: {
      const auto& o = ev.overhead();
      out->overheads.push_back(
          OverheadEvent{o.start_ns(), o.end_ns(), t->Intern(o.kind()), o.thread_id()});
      break;
    }
    case v1::Event::kGraphLaunch: {
      const auto& g = ev.graph_launch();
      out->graph_launches.push_back(GraphLaunchEvent{g.start_ns(), g.end_ns(), g.correlation_id(),
                                                     GetStream(g.stream()), g.graph_id()});
      break;
    }
    case v1::Event::kExternalCorrelation: {
      const auto& x = ev.external_correlation();
      out->external_correlations.push_back(
          ExternalCorrelationEvent{x.correlation_id(), x.external_kind(), x.external_id()});
      break;
    }
    case v1::Event::kMemoryPool: {
      const auto& m = ev.memory_pool();
      out->memory_pools.push_back(MemoryPoolEvent{
          m.timestamp_ns(), m.correlation_id(), m.device_id(), static_cast<PoolOpKind>(m.op()),
          m.managed(), m.address(), m.size(), m.release_threshold(), m.utilized_bytes()});
      break;
    }
    case v1::Event::kCollective: {
      const auto& c = ev.collective();
      out->collectives.push_back(CollectiveEvent{
          c.correlation_id(), t->Intern(c.op()), t->Intern(c.dtype()), t->Intern(c.group()),
          c.in_bytes(), c.out_bytes(), c.group_size(), c.sequence()});
      break;
    }
    case v1::Event::kOpWork: {
      const auto& w = ev.op_work();
      // An unknown source from a newer producer reads as unknown, not as an invalid enum.
      const auto source = w.source() <= v1::WORK_SOURCE_INPUT_SHAPES
                              ? static_cast<WorkSource>(w.source())
                              : WorkSource::kUnknown;
      out->op_works.push_back(OpWorkEvent{w.start_ns(), w.end_ns(), w.thread_id(),
                                          t->Intern(w.op()), t->Intern(w.dtype()), w.flops(),
                                          w.bytes(), source});
      break;
    }
    case v1::Event::kCounterSample: {
      const auto& c = ev.counter_sample();
      // Unmeasured is negative; a NaN from a foreign producer reads as unmeasured too.
      auto pct = [](float v) { return v >= 0 ? v : -1.0f; };
      out->counter_samples.push_back(CounterSampleEvent{
          c.start_ns(), c.end_ns(), c.device_id(), pct(c.tensor_active_pct()),
          pct(c.dram_throughput_pct()), pct(c.sm_active_pct()), pct(c.gpu_active_pct())});
      break;
    }
    case v1::Event::KIND_NOT_SET:
      break;
  }
}

}  // namespace gpuspy

// The model's enums mirror gpuspy.v1 value for value so conversion is a cast.
namespace gpuspy {
static_assert(static_cast<int>(CopyKind::kPtoP) == v1::COPY_KIND_PTOP);
static_assert(static_cast<int>(CopyKind::kHtoH) == v1::COPY_KIND_HTOH);
static_assert(static_cast<int>(MemoryKind::kArray) == v1::MEMORY_KIND_ARRAY);
static_assert(static_cast<int>(MemoryKind::kPinned) == v1::MEMORY_KIND_PINNED);
static_assert(static_cast<int>(SyncKind::kContext) == v1::SYNC_KIND_CONTEXT);
static_assert(static_cast<int>(SyncKind::kStreamWaitEvent) == v1::SYNC_KIND_STREAM_WAIT_EVENT);
static_assert(static_cast<int>(MemoryOpKind::kFree) == v1::MEMORY_OP_FREE);
static_assert(static_cast<int>(ApiDomain::kDriver) == v1::API_DOMAIN_DRIVER);
static_assert(static_cast<int>(PoolOpKind::kTrimmed) == v1::MEMORY_POOL_OP_TRIMMED);
static_assert(static_cast<int>(PoolOpKind::kUsage) == v1::MEMORY_POOL_OP_USAGE);
static_assert(static_cast<int>(WorkSource::kInputShapes) == v1::WORK_SOURCE_INPUT_SHAPES);
}  // namespace gpuspy
