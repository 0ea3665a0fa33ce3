// Every record kind of GPU work the parser reads (device, context, sync, launches, kernels, copies,
// fills, allocations, pools), built with the CUDA 13 header structs and realistic values, walked
// by the REAL libcupti's cuptiActivityGetNextRecord and checked field by field in the resulting
// gpuspy events (API names from the real cuptiGetCallbackName). NVTX, graphs, overhead, external
// ids and what the parser steps over: real_cupti_parse_annotations_test.cc. Skipped only where
// the toolkit's libcupti is absent.
#include "tests/unit/real_cupti_parse_fixture.h"

namespace gpuspy::inject {
namespace {

TEST_F(RealCuptiParseTest, DeviceAndContextRecordsDescribeTheHardwareAndMapContextsToDevices) {
  RecordBuffer b;
  {
    auto& d = b.Add<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
    d.id = kDevice;
    d.name = "NVIDIA H100 80GB HBM3";
    d.numMultiprocessors = 132;
    d.globalMemorySize = 80 * kGiB;
    d.computeCapabilityMajor = 9;
    d.computeCapabilityMinor = 0;
  }
  {
    auto& c = b.Add<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
    c.contextId = kContext;
    c.deviceId = kDevice;
    c.nullStreamId = 1;
  }
  {
    // Syncs carry only a context: the device comes from the CONTEXT record above.
    auto& s = b.Add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    s.start = kT0;
    s.end = kT0 + 830'000;
    s.correlationId = 1201;
    s.contextId = kContext;
    s.streamId = kStream;
    s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  }
  {
    auto& s = b.Add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    s.start = kT0 + 900'000;
    s.end = kT0 + 1'000'000;
    s.correlationId = 1202;
    s.contextId = kContext;
    s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  }
  {
    auto& s = b.Add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
    s.start = kT0 + 1'100'000;
    s.end = kT0 + 1'150'000;
    s.correlationId = 1203;
    s.contextId = kContext;
    s.streamId = kStream;
    s.cudaEventId = 3;
  }
  Parse(b);
  ASSERT_EQ(parser_.devices().size(), 1u);
  const DeviceInfo& d = parser_.devices()[0];
  EXPECT_EQ(d.id, kDevice);
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.sm_count, 132u);
  EXPECT_EQ(d.global_memory_bytes, 80 * kGiB);
  EXPECT_EQ(d.cc_major, 9u);
  EXPECT_EQ(d.cc_minor, 0u);
  ASSERT_EQ(out_.syncs.size(), 3u);
  EXPECT_EQ(out_.syncs[0], (SyncEvent{static_cast<int64_t>(kT0),
                                      static_cast<int64_t>(kT0 + 830'000), 1201,
                                      {kDevice, kContext, kStream}, SyncKind::kStream}));
  EXPECT_EQ(out_.syncs[1], (SyncEvent{static_cast<int64_t>(kT0 + 900'000),
                                      static_cast<int64_t>(kT0 + 1'000'000), 1202,
                                      {kDevice, kContext, 0}, SyncKind::kContext}));
  EXPECT_EQ(out_.syncs[2].sync_kind, SyncKind::kEvent);
  EXPECT_EQ(out_.syncs[2].correlation_id, 1203u);
}

TEST_F(RealCuptiParseTest, LaunchCallsAndTheirKernelsKeepEveryField) {
  RecordBuffer b;
  {
    auto& a = b.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    a.start = kT0;
    a.end = kT0 + 4'200;
    a.processId = 4242;
    a.threadId = kThread;
    a.correlationId = 1001;
  }
  {
    auto& a = b.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
    a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;
    a.start = kT0 + 10'000;
    a.end = kT0 + 13'500;
    a.processId = 4242;
    a.threadId = kThread + 1;
    a.correlationId = 1002;
  }
  {
    auto& k = b.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.start = kT0 + 6'000;
    k.end = kT0 + 96'000;
    k.correlationId = 1001;
    k.name = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>";
    k.deviceId = kDevice;
    k.contextId = kContext;
    k.streamId = kStream;
    k.gridX = 1024;
    k.gridY = 2;
    k.gridZ = 3;
    k.blockX = 128;
    k.blockY = 4;
    k.blockZ = 2;
    k.registersPerThread = 32;
    k.staticSharedMemory = 2048;
    k.dynamicSharedMemory = 16384;
    k.graphId = 0;
    k.graphNodeId = 0;
    k.completed = CUPTI_TIMESTAMP_UNKNOWN;
  }
  {
    // A CUDA graph node: the serial KERNEL kind shares the struct; graphId names its graph.
    auto& k = b.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_KERNEL);
    k.start = kT0 + 100'000;
    k.end = kT0 + 150'000;
    k.correlationId = 1002;
    k.name = "sm90_xmma_gemm_bf16bf16_bf16f32";
    k.deviceId = kDevice;
    k.contextId = kContext;
    k.streamId = kStream + 1;
    k.gridX = 132;
    k.gridY = 1;
    k.gridZ = 1;
    k.blockX = 384;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 168;
    k.staticSharedMemory = 0;
    k.dynamicSharedMemory = 232448;
    k.graphId = 17;
    k.graphNodeId = 99;
  }
  Parse(b);
  ASSERT_EQ(out_.apis.size(), 2u);
  EXPECT_EQ(out_.apis[0].start_ns, static_cast<int64_t>(kT0));
  EXPECT_EQ(out_.apis[0].end_ns, static_cast<int64_t>(kT0 + 4'200));
  EXPECT_EQ(out_.apis[0].correlation_id, 1001u);
  EXPECT_EQ(out_.apis[0].domain, ApiDomain::kRuntime);
  EXPECT_EQ(out_.apis[0].cbid, static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_EQ(Str(out_.apis[0].name), "cudaLaunchKernel_v7000");  // the real library's name
  EXPECT_EQ(out_.apis[0].thread_id, kThread);
  EXPECT_EQ(out_.apis[0].call_site, 0u);
  EXPECT_EQ(out_.apis[1].domain, ApiDomain::kDriver);
  EXPECT_EQ(out_.apis[1].cbid, static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx));
  EXPECT_EQ(Str(out_.apis[1].name), "cuLaunchKernelEx");
  EXPECT_EQ(out_.apis[1].thread_id, kThread + 1);
  EXPECT_EQ(out_.apis[1].end_ns - out_.apis[1].start_ns, 3'500);

  ASSERT_EQ(out_.kernels.size(), 2u);
  const KernelEvent& k = out_.kernels[0];
  EXPECT_EQ(k.start_ns, static_cast<int64_t>(kT0 + 6'000));
  EXPECT_EQ(k.end_ns, static_cast<int64_t>(kT0 + 96'000));
  EXPECT_EQ(k.correlation_id, 1001u);
  EXPECT_EQ(Str(k.name),
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>");
  EXPECT_EQ(k.stream, (StreamKey{kDevice, kContext, kStream}));
  EXPECT_EQ(k.shape, (LaunchShape{1024, 2, 3, 128, 4, 2, 32, 2048, 16384}));
  EXPECT_EQ(k.graph_id, 0u);
  const KernelEvent& g = out_.kernels[1];
  EXPECT_EQ(g.stream, (StreamKey{kDevice, kContext, kStream + 1}));
  EXPECT_EQ(g.shape, (LaunchShape{132, 1, 1, 384, 1, 1, 168, 0, 232448}));
  EXPECT_EQ(g.graph_id, 17u);
  EXPECT_EQ(Str(g.name), "sm90_xmma_gemm_bf16bf16_bf16f32");
}

TEST_F(RealCuptiParseTest, CopiesAndFillsKeepDirectionMemoryKindsBytesAndAsync) {
  RecordBuffer b;
  {
    auto& m = b.Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    m.bytes = 64ull << 20;
    m.start = kT0 + 200'000;
    m.end = kT0 + 2'900'000;
    m.deviceId = kDevice;
    m.contextId = kContext;
    m.streamId = kStream;
    m.correlationId = 1301;
    m.runtimeCorrelationId = 1301;
  }
  {
    auto& m = b.Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.flags = 0;
    m.bytes = 4;
    m.start = kT0 + 3'000'000;
    m.end = kT0 + 3'004'000;
    m.deviceId = kDevice;
    m.contextId = kContext;
    m.streamId = kStream;
    m.correlationId = 1302;
  }
  {
    auto& p = b.Add<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    p.bytes = 256ull << 20;
    p.start = kT0 + 4'000'000;
    p.end = kT0 + 4'700'000;
    p.deviceId = kDevice;
    p.contextId = kContext;
    p.streamId = kStream;
    p.srcDeviceId = kDevice;
    p.srcContextId = kContext;
    p.dstDeviceId = kDevice + 1;
    p.dstContextId = kContext + 1;
    p.correlationId = 1303;
  }
  {
    auto& s = b.Add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
    s.value = 0xdeadbeef;
    s.bytes = 3ull << 20;
    s.start = kT0 + 5'000'000;
    s.end = kT0 + 5'020'000;
    s.deviceId = kDevice;
    s.contextId = kContext;
    s.streamId = kStream;
    s.correlationId = 1304;
    s.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  }
  Parse(b);
  ASSERT_EQ(out_.memcpys.size(), 3u);
  EXPECT_EQ(out_.memcpys[0],
            (MemcpyEvent{static_cast<int64_t>(kT0 + 200'000), static_cast<int64_t>(kT0 + 2'900'000),
                         1301, {kDevice, kContext, kStream}, CopyKind::kHtoD, MemoryKind::kPinned,
                         MemoryKind::kDevice, true, 64ull << 20, kDevice, kDevice}));
  EXPECT_EQ(out_.memcpys[1],
            (MemcpyEvent{static_cast<int64_t>(kT0 + 3'000'000), static_cast<int64_t>(kT0 + 3'004'000),
                         1302, {kDevice, kContext, kStream}, CopyKind::kDtoH, MemoryKind::kDevice,
                         MemoryKind::kPageable, false, 4, kDevice, kDevice}));
  EXPECT_EQ(out_.memcpys[2],
            (MemcpyEvent{static_cast<int64_t>(kT0 + 4'000'000), static_cast<int64_t>(kT0 + 4'700'000),
                         1303, {kDevice, kContext, kStream}, CopyKind::kPtoP, MemoryKind::kDevice,
                         MemoryKind::kDevice, true, 256ull << 20, kDevice, kDevice + 1}));
  ASSERT_EQ(out_.memsets.size(), 1u);
  EXPECT_EQ(out_.memsets[0],
            (MemsetEvent{static_cast<int64_t>(kT0 + 5'000'000), static_cast<int64_t>(kT0 + 5'020'000),
                         1304, {kDevice, kContext, kStream}, MemoryKind::kManaged, true,
                         3ull << 20, 0xdeadbeef}));
}

TEST_F(RealCuptiParseTest, AllocationsAndPoolsKeepAddressSizeAndPoolOrigin) {
  constexpr uint64_t kAddress = 0x7f3a'0000'0000ull;
  RecordBuffer b;
  {
    auto& m = b.Add<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = 1401;
    m.address = kAddress;
    m.bytes = 2ull << 20;
    m.timestamp = kT0 + 6'000'000;
    m.processId = 4242;
    m.deviceId = kDevice;
    m.contextId = kContext;
    m.streamId = kStream;
    m.isAsync = 1;
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    m.memoryPoolConfig.address = kAddress;
    m.memoryPoolConfig.releaseThreshold = 0;
  }
  {
    auto& m = b.Add<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = 1402;
    m.address = kAddress + (4ull << 20);
    m.bytes = 1ull << 20;
    m.timestamp = kT0 + 7'000'000;
    m.deviceId = kDevice;
    m.contextId = kContext;
    m.streamId = kStream;
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
  }
  {
    auto& p = b.Add<CUpti_ActivityMemoryPool3>(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
    p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
    p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    p.correlationId = 1403;
    p.processId = 4242;
    p.deviceId = kDevice;
    p.minBytesToKeep = 1ull << 20;
    p.address = kAddress;
    p.size = 32ull << 20;
    p.releaseThreshold = 16ull << 20;
    p.timestamp = kT0 + 8'000'000;
    p.utilizedSize = 6ull << 20;
    p.isManagedPool = 1;
  }
  Parse(b);
  ASSERT_EQ(out_.memory.size(), 2u);
  EXPECT_EQ(out_.memory[0],
            (MemoryEvent{static_cast<int64_t>(kT0 + 6'000'000), 1401, {kDevice, kContext, kStream},
                         MemoryOpKind::kAlloc, MemoryKind::kDevice, true, kAddress, 2ull << 20}));
  EXPECT_EQ(out_.memory[1],
            (MemoryEvent{static_cast<int64_t>(kT0 + 7'000'000), 1402, {kDevice, kContext, kStream},
                         MemoryOpKind::kFree, MemoryKind::kDevice, false, kAddress + (4ull << 20),
                         1ull << 20}));
  ASSERT_EQ(out_.memory_pools.size(), 1u);
  EXPECT_EQ(out_.memory_pools[0],
            (MemoryPoolEvent{static_cast<int64_t>(kT0 + 8'000'000), 1403, kDevice,
                             PoolOpKind::kTrimmed, true, kAddress, 32ull << 20, 16ull << 20,
                             6ull << 20}));
}

}  // namespace
}  // namespace gpuspy::inject
