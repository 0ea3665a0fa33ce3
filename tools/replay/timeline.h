// A per-rank host/GPU timeline for synthetic traces: the host launches work (API calls with
// CUPTI-like costs), each stream runs it in order once launched, syncs block the host until the
// GPU drains. Collectives are launched here and finished by the caller, who knows when the
// other ranks arrive (see collective_model.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "model/events.h"
#include "model/string_table.h"
#include "tools/replay/kernel_names.h"

namespace gpuspy::synthetic {

// A collective kernel launched on one rank, waiting for its end to be known.
struct PendingCollective {
  size_t kernel_index = 0;  // in the step's EventColumns::kernels
  uint32_t stream = 0;
  int64_t arrival_ns = 0;   // when the kernel starts on this rank's GPU
};

// A per-rank host/GPU timeline.
class Timeline {
 public:
  Timeline(StringTable* strings, uint64_t seed, uint32_t tid, double host_scale, double gpu_scale)
      : s_(strings), rng_(seed), tid_(tid), host_scale_(host_scale), gpu_scale_(gpu_scale) {
    launch_ = s_->Intern("cudaLaunchKernel");
    memcpy_async_ = s_->Intern("cudaMemcpyAsync");
    memcpy_ = s_->Intern("cudaMemcpy");
    memset_ = s_->Intern("cudaMemsetAsync");
    sync_ = s_->Intern("cudaStreamSynchronize");
    device_sync_ = s_->Intern("cudaDeviceSynchronize");
    malloc_ = s_->Intern("cudaMalloc");
    free_ = s_->Intern("cudaFree");
    graph_launch_ = s_->Intern("cudaGraphLaunch");
    domain_ = s_->Intern("");
  }

  void Begin(EventColumns* ev, int64_t host) {
    ev_ = ev;
    host_ = std::max(host, host_);
  }
  int64_t host() const { return host_; }
  int64_t gpu_free(uint32_t stream) { return gpu_free_[stream]; }

  int64_t Jitter(int64_t ns, double frac = 0.1) {
    std::uniform_real_distribution<double> d(1.0 - frac, 1.0 + frac);
    return std::max<int64_t>(1, static_cast<int64_t>(ns * d(rng_)));
  }
  void HostWork(int64_t ns) { host_ += static_cast<int64_t>(Jitter(ns) * host_scale_); }

  void Launch(const char* name, int64_t gpu_ns, uint32_t stream = kComputeStream,
              int64_t not_before = 0) {
    const uint64_t corr = corr_++;
    const int64_t api_ns = Jitter(6 * kUs, 0.3);
    ev_->apis.push_back({host_, host_ + api_ns, corr, ApiDomain::kRuntime, 211, launch_, tid_, 0});
    ev_->external_correlations.push_back({corr, kExternalKindCustom0, op_id_++});
    KernelEvent k;
    k.start_ns = std::max({host_ + api_ns + Jitter(3 * kUs), gpu_free_[stream], not_before});
    k.end_ns = k.start_ns + static_cast<int64_t>(Jitter(gpu_ns) * gpu_scale_);
    k.correlation_id = corr;
    k.name = s_->Intern(name);
    k.stream = {0, kContext, stream};
    k.shape = {static_cast<uint32_t>(std::max<int64_t>(1, gpu_ns / 2000)), 1, 1, 256, 1, 1, 64,
               0, static_cast<uint32_t>(gpu_ns > 100 * kUs ? 49152 : 0)};
    ev_->kernels.push_back(k);
    gpu_free_[stream] = k.end_ns;
    host_ += api_ns;
  }

  // A copy; synchronous (or pageable) copies hold the host until the copy is done.
  // A Python line as the injector records a call's site ("train.py:57 train_step").
  StringRef Site(const std::string& where) { return s_->Intern(where); }

  void Copy(CopyKind kind, uint64_t bytes, bool pageable, bool async, StringRef call_site = 0,
            uint32_t stream = kComputeStream) {
    const uint64_t corr = corr_++;
    const double gb_per_s = pageable ? 6.0 : 22.0;
    const int64_t start = std::max(host_ + Jitter(4 * kUs), gpu_free_[stream]);
    const int64_t end = start + std::max<int64_t>(2 * kUs, static_cast<int64_t>(bytes / gb_per_s));
    MemcpyEvent m;
    m.start_ns = start;
    m.end_ns = end;
    m.correlation_id = corr;
    m.stream = {0, kContext, stream};
    m.copy_kind = kind;
    const MemoryKind host_kind = pageable ? MemoryKind::kPageable : MemoryKind::kPinned;
    m.src_kind = kind == CopyKind::kHtoD ? host_kind : MemoryKind::kDevice;
    m.dst_kind = kind == CopyKind::kHtoD ? MemoryKind::kDevice : host_kind;
    m.async = async;
    m.bytes = bytes;
    ev_->memcpys.push_back(m);
    gpu_free_[stream] = end;
    const bool blocks = !async || pageable;
    const int64_t api_end = blocks ? end + Jitter(3 * kUs) : host_ + Jitter(5 * kUs);
    ev_->apis.push_back({host_, api_end, corr, ApiDomain::kRuntime, async ? 41u : 31u,
                         async ? memcpy_async_ : memcpy_, tid_, call_site});
    host_ = api_end;
  }

  void Memset(uint64_t bytes) {
    const uint64_t corr = corr_++;
    const int64_t api_ns = Jitter(5 * kUs);
    MemsetEvent m;
    m.start_ns = std::max(host_ + api_ns, gpu_free_[kComputeStream]);
    m.end_ns = m.start_ns + Jitter(3 * kUs);
    m.correlation_id = corr;
    m.stream = {0, kContext, kComputeStream};
    m.memory_kind = MemoryKind::kDevice;
    m.async = true;
    m.bytes = bytes;
    ev_->memsets.push_back(m);
    gpu_free_[kComputeStream] = m.end_ns;
    ev_->apis.push_back({host_, host_ + api_ns, corr, ApiDomain::kRuntime, 53, memset_, tid_, 0});
    host_ += api_ns;
  }

  // cudaStreamSynchronize: the host waits for the stream to drain.
  void Sync(StringRef call_site = 0) {
    const uint64_t corr = corr_++;
    const int64_t end = std::max(host_ + Jitter(3 * kUs), gpu_free_[kComputeStream] + 2 * kUs);
    ev_->apis.push_back({host_, end, corr, ApiDomain::kRuntime, 131, sync_, tid_, call_site});
    ev_->syncs.push_back({host_, end, corr, {0, kContext, kComputeStream}, SyncKind::kStream});
    host_ = end;
  }

  // cudaDeviceSynchronize: the host waits for every stream to drain.
  void DeviceSync(StringRef call_site = 0) {
    const uint64_t corr = corr_++;
    int64_t drained = 0;
    for (const auto& [stream, free_at] : gpu_free_) drained = std::max(drained, free_at);
    const int64_t end = std::max(host_ + Jitter(3 * kUs), drained + 2 * kUs);
    ev_->apis.push_back({host_, end, corr, ApiDomain::kRuntime, 165, device_sync_, tid_, call_site});
    ev_->syncs.push_back({host_, end, corr, {0, kContext, 0}, SyncKind::kContext});
    host_ = end;
  }

  // loss.item(): a 4-byte D2H copy into pageable memory, then a stream sync.
  void Item(StringRef call_site = 0) {
    Copy(CopyKind::kDtoH, 4, /*pageable=*/true, /*async=*/true, call_site);
    Sync(call_site);
  }

  // `call_site`: the Python line that asked for it, as the injector records it (0: unknown).
  // `api_ns`: the call's cost (a fresh segment of tens of MiB costs the driver 100 us or more).
  uint64_t Malloc(uint64_t bytes, StringRef call_site = 0, int64_t api_ns = 40 * kUs) {
    const uint64_t corr = corr_++;
    api_ns = Jitter(api_ns);
    const uint64_t address = next_address_;
    next_address_ += (bytes + 0xfffff) & ~uint64_t{0xfffff};
    ev_->apis.push_back(
        {host_, host_ + api_ns, corr, ApiDomain::kRuntime, 20, malloc_, tid_, call_site});
    ev_->memory.push_back({host_ + api_ns / 2, corr, {0, kContext, 0}, MemoryOpKind::kAlloc,
                           MemoryKind::kDevice, false, address, bytes});
    host_ += api_ns;
    sizes_[address] = bytes;
    return address;
  }

  void Free(uint64_t address) {
    const uint64_t corr = corr_++;
    // cudaFree synchronizes the device first.
    const int64_t end = std::max(host_, gpu_free_[kComputeStream]) + Jitter(60 * kUs);
    ev_->apis.push_back({host_, end, corr, ApiDomain::kRuntime, 27, free_, tid_, 0});
    ev_->memory.push_back({end - kUs, corr, {0, kContext, 0}, MemoryOpKind::kFree,
                           MemoryKind::kDevice, false, address, sizes_[address]});
    host_ = end;
  }

  // A replay of a captured CUDA graph (torch.compile "reduce-overhead", CUDA graph trees): one
  // API call, one whole-graph record in place of its nodes' kernels.
  void GraphLaunch(uint32_t graph_id, int64_t gpu_ns) {
    const uint64_t corr = corr_++;
    const int64_t api_ns = Jitter(10 * kUs, 0.3);
    ev_->apis.push_back({host_, host_ + api_ns, corr, ApiDomain::kRuntime, 311, graph_launch_,
                         tid_, 0});
    GraphLaunchEvent g;
    g.start_ns = std::max(host_ + api_ns + Jitter(4 * kUs), gpu_free_[kComputeStream]);
    g.end_ns = g.start_ns + static_cast<int64_t>(Jitter(gpu_ns) * gpu_scale_);
    g.correlation_id = corr;
    g.stream = {0, kContext, kComputeStream};
    g.graph_id = graph_id;
    ev_->graph_launches.push_back(g);
    gpu_free_[kComputeStream] = g.end_ns;
    host_ += api_ns;
  }

  // The cudaMallocAsync backend's pool (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync).
  void Pool(PoolOpKind op, uint64_t size_bytes, uint64_t utilized_bytes) {
    MemoryPoolEvent p;
    p.timestamp_ns = host_;
    p.device_id = 0;
    p.op = op;
    p.address = 0x7e0000000000;
    p.size = size_bytes;
    p.release_threshold = 1ull << 30;
    p.utilized_bytes = utilized_bytes;
    ev_->memory_pools.push_back(p);
  }

  void Mark(const std::string& text) {
    ev_->nvtx_marks.push_back({host_, domain_, s_->Intern(text), tid_});
  }

  // A host sample (the live host sampler's): this thread ran `call_site` at `at_ns`.
  void Sample(int64_t at_ns, const std::string& call_site) {
    ev_->nvtx_marks.push_back({at_ns, s_->Intern(kHostSampleDomain), s_->Intern(call_site), tid_});
  }

  void Range(const std::string& text, int64_t start, int64_t end, uint32_t depth) {
    ev_->nvtx_ranges.push_back({start, end, domain_, s_->Intern(text), tid_, depth});
  }

  void Overhead(int64_t ns) {
    ev_->overheads.push_back({host_, host_ + ns, s_->Intern("cupti_buffer_flush"), tid_});
  }

  // Launches a collective's kernel on `stream` (NCCL's). It starts once the stream is free and the
  // compute stream's work so far is done (the gradients it reduces: DDP makes NCCL's stream wait
  // on an event recorded there). Its end depends on the other ranks: EndCollective sets it.
  // `args`, when given, is attached as a Kineto trace would (its correlation id is filled in).
  PendingCollective LaunchCollective(const char* name, uint32_t stream,
                                     const CollectiveEvent* args) {
    const uint64_t corr = corr_;
    Launch(name, /*gpu_ns=*/1, stream, gpu_free_[kComputeStream]);
    if (args != nullptr) {
      CollectiveEvent c = *args;
      c.correlation_id = corr;
      ev_->collectives.push_back(c);
    }
    return {ev_->kernels.size() - 1, stream, ev_->kernels.back().start_ns};
  }

  void EndCollective(const PendingCollective& p, int64_t end_ns) {
    KernelEvent& k = ev_->kernels[p.kernel_index];
    k.end_ns = std::max(end_ns, k.start_ns + 1);
    gpu_free_[p.stream] = k.end_ns;
  }

  // cudaStreamWaitEvent: later work on `waiting` starts after what `waited` has queued so far
  // (the optimizer waits for the last gradient all-reduce). GPU-side only: the host goes on.
  void WaitStream(uint32_t waiting, uint32_t waited) {
    gpu_free_[waiting] = std::max(gpu_free_[waiting], gpu_free_[waited]);
  }

  StringTable* strings() { return s_; }

 private:
  StringTable* s_;
  std::mt19937_64 rng_;
  uint32_t tid_;
  double host_scale_;
  double gpu_scale_;
  EventColumns* ev_ = nullptr;
  int64_t host_ = 0;
  std::map<uint32_t, int64_t> gpu_free_;
  std::map<uint64_t, uint64_t> sizes_;
  uint64_t corr_ = 1;
  uint64_t op_id_ = 1;
  uint64_t next_address_ = 0x7f0000000000;
  StringRef launch_, memcpy_async_, memcpy_, memset_, sync_, device_sync_, malloc_, free_,
      graph_launch_, domain_;
};

}  // namespace gpuspy::synthetic
