// The injected process's hot path, per captured event: a completed CUPTI activity buffer ->
// parsed gpuspy events -> an encoded wire batch (what the gpuspy-send thread does with every
// buffer). Records are built by hand with CUDA 13's layouts in a PyTorch-like mix: a launch API
// call and its kernel (long templated ATen / cuBLAS names), with copies, memsets, syncs and NVTX
// around them. They are walked with the fake CUPTI's cuptiActivityGetNextRecord, which sizes
// records by kind as CUPTI does.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "codec/batch_encoder.h"
#include "inject/core/activity_parser.h"

namespace gpuspy::inject {
namespace {

const char* const kKernelNames[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)",
    "triton_poi_fused_add_mul_0",
};

size_t Padded(size_t n) { return (n + 7) / 8 * 8; }

CUptiResult CUPTIAPI CallbackName(CUpti_CallbackDomain, uint32_t, const char** name) {
  *name = "cudaLaunchKernel_v7000";
  return CUPTI_SUCCESS;
}

// A CUPTI-sized buffer (4 MiB) of records; returns the number of records in it.
size_t FillBuffer(std::vector<uint8_t>* bytes) {
  bytes->assign(4 << 20, 0);
  size_t at = 0, records = 0;
  uint32_t corr = 1;
  int64_t t = 1'700'000'000'000'000'000;
  auto add = [&](auto record) {
    if (at + Padded(sizeof(record)) > bytes->size()) return false;
    std::memcpy(bytes->data() + at, &record, sizeof(record));
    at += Padded(sizeof(record));
    ++records;
    return true;
  };
  for (int i = 0;; ++i) {
    CUpti_ActivityAPI api{};
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    api.start = t;
    api.end = t + 4'000;
    api.processId = 100;
    api.threadId = 101;
    api.correlationId = corr;
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = t + 10'000;
    k.end = t + 10'000 + 20'000 + (i % 7) * 1'000;
    k.correlationId = corr++;
    k.name = kKernelNames[i % 5];
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = 7;
    k.gridX = 80 + (i % 3);
    k.gridY = k.gridZ = 1;
    k.blockX = 256;
    k.blockY = k.blockZ = 1;
    k.registersPerThread = 64;
    if (!add(api) || !add(k)) break;
    t += 5'000;
    if (i % 20 == 0) {  // an input copy, a memset and a sync per "step" of 20 launches
      CUpti_ActivityMemcpy6 m{};
      m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
      m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
      m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
      m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
      m.bytes = 4 << 20;
      m.start = t;
      m.end = t + 400'000;
      m.streamId = 7;
      m.correlationId = corr++;
      CUpti_ActivityMemset4 s{};
      s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
      s.bytes = 1 << 20;
      s.start = t + 500'000;
      s.end = t + 510'000;
      s.streamId = 7;
      s.correlationId = corr++;
      CUpti_ActivitySynchronization2 y{};
      y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
      y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
      y.start = t + 520'000;
      y.end = t + 900'000;
      y.streamId = 7;
      y.correlationId = corr++;
      if (!add(m) || !add(s) || !add(y)) break;
      t += 1'000'000;
    }
  }
  bytes->resize(at);
  return records;
}

// Parse only: CUPTI buffer -> EventColumns.
void BM_ParseBuffer(benchmark::State& state) {
  std::vector<uint8_t> buffer;
  const size_t records = FillBuffer(&buffer);
  CuptiApi api;
  api.ActivityGetNextRecord = &cuptiActivityGetNextRecord;
  api.GetCallbackName = &CallbackName;
  StringTable strings;
  ActivityParser parser(&api, &strings);
  EventColumns out;
  for (auto _ : state) {
    out.clear();
    parser.ParseBuffer(buffer.data(), buffer.size(), &out);
    benchmark::DoNotOptimize(out.kernels.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records));
  state.counters["ns_per_event"] = benchmark::Counter(
      static_cast<double>(records) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ParseBuffer)->Unit(benchmark::kMillisecond);

// The whole hot path: parse, then encode in wire batches of 4096 events.
void BM_ParseAndEncode(benchmark::State& state) {
  std::vector<uint8_t> buffer;
  const size_t records = FillBuffer(&buffer);
  CuptiApi api;
  api.ActivityGetNextRecord = &cuptiActivityGetNextRecord;
  api.GetCallbackName = &CallbackName;
  StringTable strings;
  ActivityParser parser(&api, &strings);
  BatchEncoder encoder(&strings);
  EventColumns out;
  uint64_t sequence = 1;
  size_t wire_bytes = 0;
  for (auto _ : state) {
    out.clear();
    parser.ParseBuffer(buffer.data(), buffer.size(), &out);
    wire_bytes = 0;
    for (const EventColumns& part : out.Split((out.size() + 4095) / 4096)) {
      v1::EventBatch batch;
      encoder.Encode(part, sequence++, {}, &batch);
      wire_bytes += batch.ByteSizeLong();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records));
  state.counters["ns_per_event"] = benchmark::Counter(
      static_cast<double>(records) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["wire_bytes_per_event"] =
      static_cast<double>(wire_bytes) / static_cast<double>(records);
  state.counters["records_per_buffer"] = static_cast<double>(records);
}
BENCHMARK(BM_ParseAndEncode)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuspy::inject

BENCHMARK_MAIN();
