// The fake CUDA/CUPTI (tests/fake_cuda) driven the way a profiler drives CUPTI: subscribe,
// register buffer callbacks, enable kinds, run fake CUDA calls, flush, walk the records. The
// end-to-end injection tests trust this harness to behave like CUPTI; these tests hold it to that.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cupti.h>
#include <gtest/gtest.h>

#include "tests/fake_cuda/fake_cuda.h"

namespace {

constexpr fake_dim3 kGrid{80, 2, 1};
constexpr fake_dim3 kBlock{256, 1, 1};

// What the client callbacks saw. Static: CUPTI's callbacks are plain function pointers.
struct Seen {
  std::vector<std::vector<uint8_t>> records;  // copies, one per record
  int buffers_completed = 0;
  std::vector<size_t> valid_sizes;
  struct Call {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    CUpti_ApiCallbackSite site;
    std::string function, symbol;
    uint32_t correlation;
  };
  std::vector<Call> calls;
  std::vector<CUpti_CallbackId> resources;
  CUcontext context = nullptr;
  bool flush_on_destroy = false;
};
Seen seen;
size_t buffer_bytes = 64 << 10;
size_t buffer_max_records = 0;
bool refuse_buffers = false;

void CUPTIAPI OnRequest(uint8_t** buffer, size_t* size, size_t* max_records) {
  if (refuse_buffers) {
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, buffer_bytes));
  *size = buffer_bytes;
  *max_records = buffer_max_records;
}

std::mutex seen_mu;  // completions may come from several application threads at once

void CUPTIAPI OnComplete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard lock(seen_mu);
  ++seen.buffers_completed;
  seen.valid_sizes.push_back(valid);
  CUpti_Activity* record = nullptr;
  CUptiResult r;
  while ((r = cuptiActivityGetNextRecord(buffer, valid, &record)) == CUPTI_SUCCESS) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(record);
    size_t size = 0;
    switch (record->kind) {  // enough to copy the whole struct for the kinds the tests read
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: size = sizeof(CUpti_ActivityKernel10); break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: size = sizeof(CUpti_ActivityAPI); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: size = sizeof(CUpti_ActivityMemcpy6); break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: size = sizeof(CUpti_ActivitySynchronization2); break;
      case CUPTI_ACTIVITY_KIND_MARKER: size = sizeof(CUpti_ActivityMarker2); break;
      case CUPTI_ACTIVITY_KIND_DEVICE: size = sizeof(CUpti_ActivityDevice5); break;
      case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: size = sizeof(CUpti_ActivityGraphTrace2); break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: size = sizeof(CUpti_ActivityExternalCorrelation); break;
      default: size = sizeof(CUpti_Activity); break;
    }
    seen.records.emplace_back(bytes, bytes + size);
  }
  EXPECT_EQ(r, CUPTI_ERROR_MAX_LIMIT_REACHED);
  std::free(buffer);
}

void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    seen.resources.push_back(cbid);
    seen.context = static_cast<const CUpti_ResourceData*>(data)->context;
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && seen.flush_on_destroy) {
      EXPECT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
    }
    return;
  }
  const auto* d = static_cast<const CUpti_CallbackData*>(data);
  seen.calls.push_back({domain, cbid, d->callbackSite, d->functionName ? d->functionName : "",
                        d->symbolName ? d->symbolName : "", d->correlationId});
}

class FakeCuptiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("FAKE_CUPTI_BUSY");
    unsetenv("CUDA_INJECTION64_PATH");
    fake_cupti_reset_for_tests();
    seen = Seen();
    buffer_bytes = 64 << 10;
    buffer_max_records = 0;
    refuse_buffers = false;
    ASSERT_EQ(cuptiActivityRegisterCallbacks(&OnRequest, &OnComplete), CUPTI_SUCCESS);
  }
  void TearDown() override {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cuptiFinalize();  // hands back the buffers it still holds
    fake_cupti_reset_for_tests();
    unsetenv("FAKE_CUPTI_BUSY");
  }
  void Enable(std::initializer_list<CUpti_ActivityKind> kinds) {
    for (CUpti_ActivityKind k : kinds) ASSERT_EQ(cuptiActivityEnable(k), CUPTI_SUCCESS);
  }
  void Subscribe() { ASSERT_EQ(cuptiSubscribe(&subscriber_, &OnCallback, nullptr), CUPTI_SUCCESS); }
  void Flush() { ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS); }

  template <typename T>
  std::vector<T> Records(CUpti_ActivityKind kind) const {
    std::vector<T> out;
    for (const auto& r : seen.records) {
      if (reinterpret_cast<const CUpti_Activity*>(r.data())->kind != kind) continue;
      T t;
      std::memcpy(&t, r.data(), sizeof(T));
      out.push_back(t);
    }
    return out;
  }

  CUpti_SubscriberHandle subscriber_ = nullptr;
};

TEST_F(FakeCuptiTest, KernelAndItsLaunchShareCorrelationAndKernelStartsAfterLaunch) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  fake_cuda_launch_kernel("ampere_sgemm_128x64_tn", kGrid, kBlock, 4096, 7, 50000);
  fake_cuda_launch_kernel("second", kGrid, kBlock, 0, 7, 1000);
  Flush();
  const auto apis = Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  const auto kernels = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(apis.size(), 2u);
  ASSERT_EQ(kernels.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(apis[i].cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    EXPECT_EQ(kernels[i].correlationId, apis[i].correlationId);
    EXPECT_GE(kernels[i].start, apis[i].start + 3000) << "GPU work never starts before its launch";
    EXPECT_LT(apis[i].start, apis[i].end);
    EXPECT_EQ(apis[i].processId, static_cast<uint32_t>(getpid()));
  }
  EXPECT_NE(apis[0].correlationId, apis[1].correlationId);
  const CUpti_ActivityKernel10& k = kernels[0];
  EXPECT_STREQ(k.name, "ampere_sgemm_128x64_tn");
  EXPECT_EQ(k.end - k.start, 50000u);
  EXPECT_EQ(k.gridX, 80);
  EXPECT_EQ(k.gridY, 2);
  EXPECT_EQ(k.blockX, 256);
  EXPECT_EQ(k.registersPerThread, 32);
  EXPECT_EQ(k.dynamicSharedMemory, 4096);
  EXPECT_EQ(k.streamId, 7u);
  EXPECT_EQ(k.contextId, 1u);
  EXPECT_EQ(k.deviceId, 0u);
  EXPECT_EQ(k.graphId, 0u);
  // In order on the stream: the second kernel waits for the first.
  EXPECT_GE(kernels[1].start, kernels[0].end);
}

TEST_F(FakeCuptiTest, DriverLaunchesAndNvcc13LaunchesUseTheirCbids) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  fake_cu_launch_kernel_ex("triton_poi_fused_add_0", kGrid, kBlock, 0, 3, 1000);
  fake_cuda_launch_kernel_nvcc13("my_kernel", kGrid, kBlock, 0, 3, 1000);
  Flush();
  const auto driver = Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
  const auto runtime = Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  ASSERT_EQ(driver.size(), 1u);
  ASSERT_EQ(runtime.size(), 1u);
  EXPECT_EQ(driver[0].cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx);
  EXPECT_EQ(runtime[0].cbid, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000);
  const char* name = nullptr;
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, driver[0].cbid, &name), CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cuLaunchKernelEx");
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, runtime[0].cbid, &name), CUPTI_SUCCESS);
  EXPECT_STREQ(name, "__cudaLaunchKernel_v13000");
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
                                 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &name),
            CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cudaLaunchKernel_v7000");
  EXPECT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 99999, &name),
            CUPTI_ERROR_INVALID_PARAMETER);
}

TEST_F(FakeCuptiTest, RecordsOnlyForEnabledKinds) {
  Enable({CUPTI_ACTIVITY_KIND_MEMCPY});
  fake_cuda_launch_kernel("k", kGrid, kBlock, 0, 1, 1000);
  fake_cuda_memcpy(FAKE_HTOD, FAKE_PINNED, FAKE_DEVICE, 1 << 20, 1, 1, 0);
  fake_cuda_stream_synchronize(1);
  fake_nvtx_mark("m");
  Flush();
  ASSERT_EQ(seen.records.size(), 1u);
  const auto copies = Records<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  EXPECT_EQ(copies[0].srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  EXPECT_EQ(copies[0].flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC, CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
  ASSERT_EQ(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY), CUPTI_SUCCESS);
  fake_cuda_memcpy(FAKE_HTOD, FAKE_PINNED, FAKE_DEVICE, 1 << 20, 1, 1, 0);
  Flush();
  EXPECT_EQ(seen.records.size(), 1u);
}

TEST_F(FakeCuptiTest, RefusedBuffersDropRecordsAndCountThemPerQueue) {
  Subscribe();
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  refuse_buffers = true;
  for (int i = 0; i < 3; ++i) fake_cuda_launch_kernel("k", kGrid, kBlock, 0, 5, 1000);
  ASSERT_NE(seen.context, nullptr);  // from CONTEXT_CREATED
  size_t dropped = 0;
  // The kernels' queue is (context, stream 5); the API records belong to no context.
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(seen.context, 5, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 3u);
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(seen.context, 5, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0u) << "the count resets once read";
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 3u) << "NULL context: every queue";
  refuse_buffers = false;
  fake_cuda_launch_kernel("k", kGrid, kBlock, 0, 5, 1000);
  Flush();
  EXPECT_EQ(seen.records.size(), 2u);
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0u);
}

TEST_F(FakeCuptiTest, FullBuffersAreCompletedAndReplacedWithoutLosingRecords) {
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  buffer_bytes = 512;  // two kernel records (216 bytes each) per buffer
  for (int i = 0; i < 5; ++i) fake_cuda_launch_kernel("k", kGrid, kBlock, 0, 1, 1000);
  EXPECT_EQ(seen.buffers_completed, 2) << "completed as they fill, before any flush";
  Flush();
  EXPECT_EQ(seen.buffers_completed, 3);
  EXPECT_EQ(seen.valid_sizes, (std::vector<size_t>{432, 432, 216}));
  EXPECT_EQ(Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size(), 5u);
  Flush();
  EXPECT_EQ(seen.buffers_completed, 3) << "empty buffers stay with CUPTI on flush";
}

TEST_F(FakeCuptiTest, MaxNumRecordsLimitsRecordsPerBuffer) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  buffer_max_records = 1;
  for (int i = 0; i < 3; ++i) fake_cuda_malloc(1 << 20);
  Flush();
  EXPECT_EQ(seen.buffers_completed, 3);
  EXPECT_EQ(seen.records.size(), 3u);
}

TEST_F(FakeCuptiTest, OneSubscriberAtATime) {
  Subscribe();
  CUpti_SubscriberHandle second = nullptr;
  EXPECT_EQ(cuptiSubscribe(&second, &OnCallback, nullptr), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  ASSERT_EQ(cuptiUnsubscribe(subscriber_), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiSubscribe(&second, &OnCallback, nullptr), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiFinalize(), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiSubscribe(&second, &OnCallback, nullptr), CUPTI_SUCCESS) << "after cuptiFinalize";
}

TEST_F(FakeCuptiTest, BusyCuptiRefusesEvenTheFirstSubscriber) {
  setenv("FAKE_CUPTI_BUSY", "1", 1);
  CUpti_SubscriberHandle s = nullptr;
  const CUptiResult r = cuptiSubscribe(&s, &OnCallback, nullptr);
  EXPECT_EQ(r, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  const char* text = nullptr;
  ASSERT_EQ(cuptiGetResultString(r, &text), CUPTI_SUCCESS);
  EXPECT_STREQ(text, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  ASSERT_EQ(cuptiGetResultString(CUPTI_SUCCESS, &text), CUPTI_SUCCESS);
  EXPECT_STREQ(text, "CUPTI_SUCCESS");
}

TEST_F(FakeCuptiTest, NvtxRangesGiveStartAndEndMarkersWithTheSameId) {
  Enable({CUPTI_ACTIVITY_KIND_MARKER});
  fake_nvtx_range_push("ProfilerStep#0");
  fake_nvtx_range_push("forward");
  fake_nvtx_mark("logged");
  fake_nvtx_range_pop();
  fake_nvtx_range_pop();
  Flush();
  const auto m = Records<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].flags, CUPTI_ACTIVITY_FLAG_MARKER_START);
  EXPECT_STREQ(m[0].name, "ProfilerStep#0");
  EXPECT_EQ(m[0].domain, nullptr);
  EXPECT_EQ(m[0].objectKind, CUPTI_ACTIVITY_OBJECT_THREAD);
  EXPECT_EQ(m[0].objectId.pt.processId, static_cast<uint32_t>(getpid()));
  EXPECT_STREQ(m[1].name, "forward");
  EXPECT_EQ(m[2].flags, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS);
  EXPECT_STREQ(m[2].name, "logged");
  // Pops close the innermost range first; END records carry the id and no name.
  EXPECT_EQ(m[3].flags, CUPTI_ACTIVITY_FLAG_MARKER_END);
  EXPECT_EQ(m[3].id, m[1].id);
  EXPECT_EQ(m[3].name, nullptr);
  EXPECT_EQ(m[4].id, m[0].id);
  EXPECT_GE(m[4].timestamp, m[0].timestamp);
}

TEST_F(FakeCuptiTest, ApiCallbacksFireAtEnterAndExitForEnabledDomainsAndIds) {
  Subscribe();
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  fake_cuda_launch_kernel("my_kernel", kGrid, kBlock, 0, 1, 1000);
  fake_cu_launch_kernel_ex("not_seen", kGrid, kBlock, 0, 1, 1000);  // driver domain is off
  Flush();
  ASSERT_EQ(seen.calls.size(), 2u);
  EXPECT_EQ(seen.calls[0].site, CUPTI_API_ENTER);
  EXPECT_EQ(seen.calls[1].site, CUPTI_API_EXIT);
  for (const auto& c : seen.calls) {
    EXPECT_EQ(c.domain, CUPTI_CB_DOMAIN_RUNTIME_API);
    EXPECT_EQ(c.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    EXPECT_EQ(c.function, "cudaLaunchKernel");
    EXPECT_EQ(c.symbol, "my_kernel");
  }
  const auto apis = Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  ASSERT_EQ(apis.size(), 1u);
  EXPECT_EQ(seen.calls[0].correlation, apis[0].correlationId);
  EXPECT_EQ(seen.calls[1].correlation, apis[0].correlationId);

  // One callback id of a domain; disabling one id of an enabled domain.
  ASSERT_EQ(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API,
                                CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx),
            CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
            CUPTI_SUCCESS);
  seen.calls.clear();
  fake_cuda_launch_kernel("not_seen", kGrid, kBlock, 0, 1, 1000);
  fake_cu_launch_kernel_ex("triton_poi_fused_add_0", kGrid, kBlock, 0, 1, 1000);
  ASSERT_EQ(seen.calls.size(), 2u);
  EXPECT_EQ(seen.calls[0].function, "cuLaunchKernelEx");
  EXPECT_EQ(seen.calls[0].symbol, "triton_poi_fused_add_0");
}

TEST_F(FakeCuptiTest, ContextCallbacksAndAFlushFromTheDestroyCallback) {
  Subscribe();
  ASSERT_EQ(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
            CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
            CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  fake_cuda_launch_kernel("k", kGrid, kBlock, 0, 1, 1000);
  seen.flush_on_destroy = true;  // what a profiler does there; must not deadlock
  fake_cuda_context_destroy();
  EXPECT_EQ(seen.resources, (std::vector<CUpti_CallbackId>{CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                                                           CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING}));
  const auto devices = Records<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_STREQ(devices[0].name, "Fake H100");
  EXPECT_EQ(devices[0].numMultiprocessors, 132u);
  EXPECT_EQ(devices[0].globalMemorySize, 80ull << 30);
  EXPECT_EQ(devices[0].computeCapabilityMajor, 9u);
  EXPECT_EQ(Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size(), 1u);
}

TEST_F(FakeCuptiTest, BlockingCallsLastUntilTheGpuWorkTheyWaitFor) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
          CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION});
  fake_cuda_memcpy(FAKE_HTOD, FAKE_PAGEABLE, FAKE_DEVICE, 4 << 20, 0, 2, 0);
  fake_cuda_launch_kernel("long", kGrid, kBlock, 0, 2, 300000);
  fake_cuda_stream_synchronize(2);
  Flush();
  const auto apis = Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  const auto copy = Records<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  const auto kernel = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const auto sync = Records<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  ASSERT_EQ(apis.size(), 3u);
  ASSERT_EQ(copy.size(), 1u);
  ASSERT_EQ(kernel.size(), 1u);
  ASSERT_EQ(sync.size(), 1u);
  EXPECT_EQ(copy[0].flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC, 0);
  EXPECT_GE(apis[0].end, copy[0].end) << "cudaMemcpy returns after the copy";
  EXPECT_GE(kernel[0].start, copy[0].end) << "same stream, in order";
  EXPECT_EQ(sync[0].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
  EXPECT_EQ(sync[0].streamId, 2u);
  EXPECT_EQ(sync[0].correlationId, apis[2].correlationId);
  EXPECT_GE(sync[0].end, kernel[0].end);
  EXPECT_EQ(apis[2].end, sync[0].end);
  EXPECT_LE(apis[2].start, sync[0].start);
}

// The end a fake NCCL kernel is given: its start plus what `arg` says (another rank's late
// arrival, in a real job).
uint64_t EndAfter(uint64_t start_ns, void* arg) {
  return start_ns + *static_cast<const uint64_t*>(arg);
}

TEST_F(FakeCuptiTest, CollectiveKernelsStartWhenTheirStreamArrivesAndEndWhenTheyAreTold) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
          CUPTI_ACTIVITY_KIND_SYNCHRONIZATION});
  constexpr uint32_t kCompute = 2, kComm = 3;
  // Seconds of simulated GPU time (nothing here waits for it): however slowly this host runs,
  // its calls return long before that work would be done.
  constexpr uint64_t kComputeNs = 2'000'000'000;
  uint64_t spin_and_transfer_ns = 3'000'000'000;
  fake_cuda_launch_kernel("backward", kGrid, kBlock, 0, kCompute, kComputeNs);
  fake_cuda_stream_wait_stream(kComm, kCompute);  // the gradients first
  fake_cuda_launch_collective("ncclDevKernel_AllReduce_Sum_f32_RING_LL", kGrid, kBlock, kComm,
                              &EndAfter, &spin_and_transfer_ns);
  fake_cuda_stream_wait_stream(kCompute, kComm);  // the optimizer waits for the reduced ones
  fake_cuda_launch_kernel("optimizer", kGrid, kBlock, 0, kCompute, 1000);
  Flush();
  const auto kernels = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const auto apis = Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  const auto waits = Records<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  ASSERT_EQ(kernels.size(), 3u);
  ASSERT_EQ(apis.size(), 5u);
  ASSERT_EQ(waits.size(), 2u);
  const auto& backward = kernels[0];
  const auto& nccl = kernels[1];
  const auto& optimizer = kernels[2];
  EXPECT_EQ(nccl.streamId, kComm);
  EXPECT_EQ(nccl.start, backward.end) << "NCCL's stream waited for the compute stream";
  EXPECT_EQ(nccl.end, nccl.start + spin_and_transfer_ns);
  EXPECT_EQ(nccl.correlationId, apis[2].correlationId);
  EXPECT_EQ(apis[2].cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  EXPECT_GE(optimizer.start, nccl.end) << "the compute stream waited for NCCL's";
  for (const auto& w : waits) {
    EXPECT_EQ(w.type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT);
  }
  EXPECT_EQ(waits[0].streamId, kComm);
  EXPECT_EQ(waits[1].streamId, kCompute);
  EXPECT_EQ(apis[1].cbid, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020);
  // GPU-side waits: the host went on at once, long before the GPU work it ordered was done.
  EXPECT_LT(apis[3].end, nccl.end);
}

TEST_F(FakeCuptiTest, GraphLaunchGivesNodeKernelsOrOneGraphRecord) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  fake_cuda_graph_launch(3, 1, 1000);
  Flush();
  auto kernels = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const auto apis = Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  ASSERT_EQ(kernels.size(), 3u);
  ASSERT_EQ(apis.size(), 1u);
  EXPECT_EQ(apis[0].cbid, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  for (const auto& k : kernels) {
    EXPECT_NE(k.graphId, 0u);
    EXPECT_EQ(k.correlationId, apis[0].correlationId);
  }
  Enable({CUPTI_ACTIVITY_KIND_GRAPH_TRACE});
  seen.records.clear();
  fake_cuda_graph_launch(3, 1, 1000);
  Flush();
  EXPECT_EQ(Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size(), 0u);
  const auto graphs = Records<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  ASSERT_EQ(graphs.size(), 1u);
  EXPECT_EQ(graphs[0].end - graphs[0].start, 3000u);
}

TEST_F(FakeCuptiTest, ExternalIdGoesWithTheNextApiCall) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION});
  fake_cuda_push_external_id(1234);
  fake_cuda_launch_kernel("k", kGrid, kBlock, 0, 1, 1000);
  fake_cuda_launch_kernel("k", kGrid, kBlock, 0, 1, 1000);
  Flush();
  const auto x = Records<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  const auto apis = Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  ASSERT_EQ(x.size(), 1u);
  ASSERT_EQ(apis.size(), 2u);
  EXPECT_EQ(x[0].externalId, 1234u);
  EXPECT_EQ(x[0].correlationId, apis[0].correlationId);
}

TEST_F(FakeCuptiTest, ThreadIdsAreSystemIdsWhenAskedFor) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  ASSERT_EQ(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), CUPTI_SUCCESS);
  fake_cuda_device_synchronize();
  Flush();
  const auto apis = Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  ASSERT_EQ(apis.size(), 1u);
  EXPECT_EQ(apis[0].threadId, static_cast<uint32_t>(syscall(SYS_gettid)));
}

TEST_F(FakeCuptiTest, ConcurrentLaunchesLoseNothing) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  buffer_bytes = 1024;  // many buffer switches, raced by four threads
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) fake_cuda_launch_kernel("k", kGrid, kBlock, 0, t, 100);
    });
  }
  for (auto& t : threads) t.join();
  Flush();
  EXPECT_EQ(Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size(), 800u);
  EXPECT_EQ(Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).size(), 800u);
  size_t dropped = 0;
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0u);
}

TEST_F(FakeCuptiTest, NextRecordStopsAtTheEndAndOnGarbage) {
  alignas(8) uint8_t buffer[64] = {};
  CUpti_Activity* record = nullptr;
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, 0, &record), CUPTI_ERROR_MAX_LIMIT_REACHED);
  reinterpret_cast<CUpti_Activity*>(buffer)->kind = static_cast<CUpti_ActivityKind>(0x7777);
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, sizeof(buffer), &record), CUPTI_ERROR_INVALID_KIND);
  // A record cut off by validSize ends the walk, as the real libcupti does (not an error).
  reinterpret_cast<CUpti_Activity*>(buffer)->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, 16, &record), CUPTI_ERROR_MAX_LIMIT_REACHED);
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, sizeof(CUpti_ActivityAPI), &record), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, sizeof(CUpti_ActivityAPI), &record),
            CUPTI_ERROR_MAX_LIMIT_REACHED);
  uint64_t t = 0;
  ASSERT_EQ(cuptiGetTimestamp(&t), CUPTI_SUCCESS);
  EXPECT_GT(t, 1'600'000'000'000'000'000ull) << "CLOCK_REALTIME in ns";
}

}  // namespace
