#include "tools/replay/synthetic_workload.h"

#include <algorithm>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"

namespace gpuspy::synthetic {
namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;
constexpr uint32_t kComputeStream = 7;
constexpr uint32_t kNcclStream = 13;
constexpr uint32_t kContext = 1;
// CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0: the kind PyTorch's profiler (Kineto) pushes its op ids
// under, one per CUDA call made inside an op.
constexpr uint32_t kExternalKindCustom0 = 3;

// Real kernel names from PyTorch/cuBLAS/cuDNN/NCCL traces: long, templated, repeated.
constexpr const char* kTensorCoreGemms[] = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x10_tn_align8>"
    "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x10_tn_align8::Params)",
    "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_"
    "warpsize2x2x1_g1_tensor16x8x16_kernel",
};
constexpr const char* kSimtGemms[] = {
    "ampere_sgemm_128x64_tn",
    "ampere_sgemm_64x32_sliced1x4_nn",
    "volta_sgemm_128x32_nt",
};
constexpr const char* kElementwise[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
    "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::"
    "operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, float, "
    "at::detail::Array<char*, 2>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
    "float, float const*, float const*, float const*, float*, float*, float*)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<"
    "float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, "
    "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
};
constexpr const char* kOptimizer =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<"
    "float, 4>, float*, float, float, float, float, float, float, bool, bool>";
constexpr const char* kAutotune = "cudnn::autotune::find_best_algo_kernel_";
constexpr const char* kNccl =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

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
  void Copy(CopyKind kind, uint64_t bytes, bool pageable, bool async) {
    const uint64_t corr = corr_++;
    const double gb_per_s = pageable ? 6.0 : 22.0;
    const int64_t start = std::max(host_ + Jitter(4 * kUs), gpu_free_[kComputeStream]);
    const int64_t end = start + std::max<int64_t>(2 * kUs, static_cast<int64_t>(bytes / gb_per_s));
    MemcpyEvent m;
    m.start_ns = start;
    m.end_ns = end;
    m.correlation_id = corr;
    m.stream = {0, kContext, kComputeStream};
    m.copy_kind = kind;
    const MemoryKind host_kind = pageable ? MemoryKind::kPageable : MemoryKind::kPinned;
    m.src_kind = kind == CopyKind::kHtoD ? host_kind : MemoryKind::kDevice;
    m.dst_kind = kind == CopyKind::kHtoD ? MemoryKind::kDevice : host_kind;
    m.async = async;
    m.bytes = bytes;
    ev_->memcpys.push_back(m);
    gpu_free_[kComputeStream] = end;
    const bool blocks = !async || pageable;
    const int64_t api_end = blocks ? end + Jitter(3 * kUs) : host_ + Jitter(5 * kUs);
    ev_->apis.push_back({host_, api_end, corr, ApiDomain::kRuntime, async ? 41u : 31u,
                         async ? memcpy_async_ : memcpy_, tid_, 0});
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
  void Sync() {
    const uint64_t corr = corr_++;
    const int64_t end = std::max(host_ + Jitter(3 * kUs), gpu_free_[kComputeStream] + 2 * kUs);
    ev_->apis.push_back({host_, end, corr, ApiDomain::kRuntime, 131, sync_, tid_, 0});
    ev_->syncs.push_back({host_, end, corr, {0, kContext, kComputeStream}, SyncKind::kStream});
    host_ = end;
  }

  // loss.item(): a 4-byte D2H copy into pageable memory, then a stream sync.
  void Item() {
    Copy(CopyKind::kDtoH, 4, /*pageable=*/true, /*async=*/true);
    Sync();
  }

  uint64_t Malloc(uint64_t bytes) {
    const uint64_t corr = corr_++;
    const int64_t api_ns = Jitter(40 * kUs);
    const uint64_t address = next_address_;
    next_address_ += (bytes + 0xfffff) & ~uint64_t{0xfffff};
    ev_->apis.push_back({host_, host_ + api_ns, corr, ApiDomain::kRuntime, 20, malloc_, tid_, 0});
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

  void Range(const std::string& text, int64_t start, int64_t end, uint32_t depth) {
    ev_->nvtx_ranges.push_back({start, end, domain_, s_->Intern(text), tid_, depth});
  }

  void Overhead(int64_t ns) {
    ev_->overheads.push_back({host_, host_ + ns, s_->Intern("cupti_buffer_flush"), tid_});
  }

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
  StringRef launch_, memcpy_async_, memcpy_, memset_, sync_, malloc_, free_, graph_launch_,
      domain_;
};

// The forward/backward/optimizer body of one step, shaped by the scenario.
void StepBody(Scenario scenario, bool warmup, int ranks, int64_t nccl_wait, Timeline& t) {
  const double slow = warmup ? 2.5 : 1.0;
  switch (scenario) {
    case Scenario::kHealthy:
    case Scenario::kAllocChurn:
    case Scenario::kInputStall:
      for (int i = 0; i < 120; ++i) {
        const bool gemm = i % 3 == 0;
        t.Launch(gemm ? kTensorCoreGemms[i % 3] : kElementwise[i % 4],
                 static_cast<int64_t>((gemm ? 900 : 250) * kUs * slow));
        t.HostWork(15 * kUs);
      }
      break;
    case Scenario::kFp32Gemm:
      for (int i = 0; i < 60; ++i) {
        const bool gemm = i % 2 == 0;
        t.Launch(gemm ? kSimtGemms[i % 3] : kElementwise[i % 4],
                 static_cast<int64_t>((gemm ? 1500 : 60) * kUs * slow));
        t.HostWork(15 * kUs);
      }
      break;
    case Scenario::kSyncStall:
      for (int i = 0; i < 48; ++i) {
        t.Launch(i % 4 == 0 ? kTensorCoreGemms[i % 3] : kElementwise[i % 4],
                 static_cast<int64_t>(200 * kUs * slow));
        t.HostWork(15 * kUs);
        if (i % 4 == 3) {
          t.Item();              // e.g. print(loss.item()) / metrics.append(acc.item())
          t.HostWork(1500 * kUs);  // Python on the value: logging, formatting
        }
      }
      break;
    case Scenario::kLaunchStorm:
      for (int i = 0; i < 2500; ++i) {
        t.Launch(kElementwise[i % 4], static_cast<int64_t>(3 * kUs * slow));
        t.HostWork(6 * kUs);
      }
      break;
    case Scenario::kCopyHeavy:
      for (int i = 0; i < 20; ++i) {
        t.Launch(kTensorCoreGemms[i % 3], static_cast<int64_t>(300 * kUs * slow));
        t.HostWork(15 * kUs);
      }
      break;
  }
  if (ranks > 1) {
    // Gradient all-reduce on NCCL's stream, after the backward pass; waits for slower ranks.
    t.Launch(kNccl, 2 * kMs + nccl_wait, kNcclStream, t.gpu_free(kComputeStream));
  }
  for (int i = 0; i < 8; ++i) {
    t.Launch(kOptimizer, 40 * kUs);
    t.HostWork(10 * kUs);
  }
}

}  // namespace

bool ParseScenario(const std::string& name, Scenario* out) {
  for (Scenario s : AllScenarios()) {
    if (ScenarioName(s) == name) {
      *out = s;
      return true;
    }
  }
  return false;
}

std::vector<Scenario> AllScenarios() {
  return {Scenario::kHealthy,    Scenario::kSyncStall, Scenario::kLaunchStorm,
          Scenario::kCopyHeavy,  Scenario::kInputStall, Scenario::kFp32Gemm,
          Scenario::kAllocChurn};
}

std::string ScenarioName(Scenario s) {
  switch (s) {
    case Scenario::kHealthy: return "healthy";
    case Scenario::kSyncStall: return "sync_stall";
    case Scenario::kLaunchStorm: return "launch_storm";
    case Scenario::kCopyHeavy: return "copy_heavy";
    case Scenario::kInputStall: return "input_stall";
    case Scenario::kFp32Gemm: return "fp32_gemm";
    case Scenario::kAllocChurn: return "alloc_churn";
  }
  return "?";
}

std::string ExpectedPrimary(Scenario s) {
  switch (s) {
    case Scenario::kHealthy: return "gpu_bound";
    case Scenario::kSyncStall: return "sync_stall";
    case Scenario::kLaunchStorm: return "launch_storm";
    case Scenario::kCopyHeavy: return "copy_dominated";
    case Scenario::kInputStall: return "input_stall";
    case Scenario::kFp32Gemm: return "fp32_gemm";
    case Scenario::kAllocChurn: return "alloc_churn";
  }
  return "?";
}

size_t SyntheticRank::event_count() const {
  size_t n = 0;
  for (const auto& s : steps) n += s.size();
  return n;
}

SyntheticRank GenerateRank(const SyntheticOptions& o, int rank) {
  SyntheticRank out;
  auto& id = out.identity;
  id.set_process_key(absl::StrCat("replay-host:", 40000 + rank, ":", o.seed, ":", o.job_id));
  id.set_job_id(o.job_id);
  id.set_host(absl::StrCat("replay-host-", rank / 8));
  id.set_pid(40000 + rank);
  id.set_rank(rank);
  id.set_local_rank(rank % 8);
  id.set_world_size(o.ranks);
  id.add_command_line("python");
  id.add_command_line("train.py");
  id.add_command_line(absl::StrCat("--scenario=", ScenarioName(o.scenario)));
  id.set_source("replay");
  id.set_start_time_unix_ns(o.start_ns);
  auto* dev = id.add_devices();
  dev->set_id(0);
  dev->set_name("NVIDIA H100 80GB HBM3");
  dev->set_sm_count(132);
  dev->set_global_memory_bytes(80ull << 30);
  dev->set_compute_capability_major(9);

  const bool slow_rank = rank == o.slow_rank;
  Timeline t(&out.strings, o.seed * 1000003 + rank, 1000 + rank, slow_rank ? 1.3 : 1.0,
             slow_rank ? 1.3 : 1.0);
  // Ranks that are not slow wait in the all-reduce for the slow one.
  const int64_t nccl_wait = o.slow_rank >= 0 && !slow_rank ? 25 * kMs : 0;
  int64_t host = o.start_ns;
  std::vector<uint64_t> weights;
  for (int step = 0; step < o.steps; ++step) {
    EventColumns& ev = out.steps.emplace_back();
    const bool warmup = step < o.warmup_steps;
    t.Begin(&ev, host);
    const int64_t start = t.host();
    // Input: the next batch from the data loader (no CUDA work on the host meanwhile).
    t.HostWork(o.scenario == Scenario::kInputStall ? 45 * kMs : 300 * kUs);
    if (step == 0) {
      for (int i = 0; i < 4; ++i) weights.push_back(t.Malloc(256ull << 20));
      t.Free(t.Malloc(32ull << 20));  // autotuning scratch, given back at once
      t.Pool(PoolOpKind::kCreated, 2ull << 30, 1ull << 30);
      // One CUDA graph replay at start-up (e.g. a compiled warm-up region), so traces carry
      // whole-graph records too; steady steps stay graph-free so verdicts stay per-kernel.
      t.GraphLaunch(1, 500 * kUs);
    }
    if (warmup) {
      // Lazy module loading, cuDNN autotuning, torch.compile: slow host and extra kernels.
      t.HostWork(40 * kMs);
      for (int i = 0; i < 20; ++i) t.Launch(kAutotune, 400 * kUs);
    }
    if (o.scenario == Scenario::kCopyHeavy) {
      t.Copy(CopyKind::kHtoD, 256ull << 20, /*pageable=*/true, /*async=*/false);
    } else {
      t.Copy(CopyKind::kHtoD, 8ull << 20, /*pageable=*/false, /*async=*/true);
    }
    t.Memset(1 << 20);
    if (o.scenario == Scenario::kAllocChurn) {
      // torch.cuda.empty_cache() each step: the allocator gives memory back and asks again.
      std::vector<uint64_t> blocks;
      for (int i = 0; i < 12; ++i) blocks.push_back(t.Malloc(64ull << 20));
      StepBody(o.scenario, warmup, o.ranks, nccl_wait, t);
      for (uint64_t b : blocks) t.Free(b);
      t.Pool(PoolOpKind::kTrimmed, 2ull << 30, 1ull << 30);
    } else {
      StepBody(o.scenario, warmup, o.ranks, nccl_wait, t);
    }
    t.Item();  // loss.item()
    t.Mark(absl::StrCat("step ", step, " done"));
    if (step % 4 == 0) t.Overhead(20 * kUs);
    if (o.nvtx_steps) t.Range(absl::StrCat("ProfilerStep#", step), start, t.host(), 0);
    host = t.host();
    out.expected_primary.push_back(warmup ? "warmup" : ExpectedPrimary(o.scenario));
  }
  return out;
}

}  // namespace gpuspy::synthetic
