// CUPTI record parsing on CPU: records are built by hand with the CUDA 13 struct layouts and
// walked by a test stand-in for cuptiActivityGetNextRecord.
#include "inject/core/activity_parser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace gpuspy::inject {
namespace {

// Layouts the parser was written against; a toolkit upgrade that changes them must be noticed.
static_assert(sizeof(CUpti_ActivityAPI) == 40);
static_assert(offsetof(CUpti_ActivityKernel10, correlationId) < sizeof(CUpti_ActivityKernel10));

// Records sit back to back, each padded to 8 bytes, as CUPTI lays them out; they are walked with
// cuptiActivityGetNextRecord of the fake CUPTI (tests/fake_cuda), which sizes them by kind.
size_t Padded(size_t n) { return (n + 7) / 8 * 8; }

CUptiResult CUPTIAPI TestCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                      const char** name) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
      cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
    *name = "cudaLaunchKernel_v7000";
    return CUPTI_SUCCESS;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx) {
    *name = "cuLaunchKernelEx";
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

class BufferBuilder {
 public:
  template <typename T>
  T& Add(CUpti_ActivityKind kind) {
    const size_t at = bytes_.size();
    bytes_.resize(at + Padded(sizeof(T)), 0);
    T* r = reinterpret_cast<T*>(bytes_.data() + at);
    reinterpret_cast<CUpti_Activity*>(r)->kind = kind;
    offsets_.push_back(at);
    return *r;
  }
  uint8_t* data() { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<uint8_t> bytes_;  // heap storage: malloc alignment (16) covers CUPTI's 8
  std::vector<size_t> offsets_;
};

class ActivityParserTest : public ::testing::Test {
 protected:
  ActivityParserTest() {
    api_.ActivityGetNextRecord = &cuptiActivityGetNextRecord;
    api_.GetCallbackName = &TestCallbackName;
  }
  // Records must be filled before parsing (BufferBuilder storage may move on Add).
  void Parse(BufferBuilder& b) { parser_.ParseBuffer(b.data(), b.size(), &out_); }

  CuptiApi api_;
  StringTable strings_;
  ActivityParser parser_{&api_, &strings_};
  EventColumns out_;
};

TEST_F(ActivityParserTest, KernelAndItsLaunchShareCorrelationAndKeepAllFields) {
  BufferBuilder b;
  {
    auto& api = b.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
    api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    api.start = 1000;
    api.end = 1006;
    api.threadId = 777;
    api.correlationId = 42;
  }
  {
    auto& k = b.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.start = 1010;
    k.end = 2010;
    k.correlationId = 42;
    k.name = "ampere_sgemm_128x64_tn";
    k.deviceId = 1;
    k.contextId = 3;
    k.streamId = 7;
    k.gridX = 80;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 96;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 49152;
    k.graphId = 0;
  }
  Parse(b);
  ASSERT_EQ(out_.apis.size(), 1u);
  ASSERT_EQ(out_.kernels.size(), 1u);
  const ApiEvent& a = out_.apis[0];
  const KernelEvent& k = out_.kernels[0];
  EXPECT_EQ(a.correlation_id, k.correlation_id);
  EXPECT_EQ(strings_.Get(a.name), "cudaLaunchKernel_v7000");
  EXPECT_EQ(a.domain, ApiDomain::kRuntime);
  EXPECT_EQ(a.thread_id, 777u);
  EXPECT_EQ(a.end_ns - a.start_ns, 6);
  EXPECT_EQ(strings_.Get(k.name), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(k.stream, (StreamKey{1, 3, 7}));
  EXPECT_EQ(k.shape.grid_x, 80u);
  EXPECT_EQ(k.shape.grid_y, 2u);
  EXPECT_EQ(k.shape.block_x, 256u);
  EXPECT_EQ(k.shape.registers_per_thread, 96u);
  EXPECT_EQ(k.shape.dynamic_shared_bytes, 49152u);
  EXPECT_EQ(k.end_ns - k.start_ns, 1000);
}

TEST_F(ActivityParserTest, DriverLaunchNamedFromCbidAndUnknownCbidGetsFallbackName) {
  BufferBuilder b;
  {
    auto& api = b.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
    api.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;
    api.correlationId = 9;
  }
  {
    auto& api = b.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
    api.cbid = 99999;
  }
  Parse(b);
  ASSERT_EQ(out_.apis.size(), 2u);
  EXPECT_EQ(strings_.Get(out_.apis[0].name), "cuLaunchKernelEx");
  EXPECT_EQ(out_.apis[0].domain, ApiDomain::kDriver);
  EXPECT_EQ(strings_.Get(out_.apis[1].name), "cuda_runtime_99999");
}

TEST_F(ActivityParserTest, MemcpyKindsAndAsyncFlag) {
  BufferBuilder b;
  {
    auto& m = b.Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.flags = 0;
    m.bytes = 1 << 20;
    m.start = 10;
    m.end = 110;
  }
  {
    auto& m = b.Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    m.bytes = 4;
    m.start = 120;  // records without timestamps are dropped (untimed_records)
    m.end = 125;
  }
  {
    auto& p = b.Add<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.srcDeviceId = 0;
    p.dstDeviceId = 3;
    p.deviceId = 0;
    p.bytes = 4096;
    p.start = 130;
    p.end = 140;
  }
  Parse(b);
  ASSERT_EQ(out_.memcpys.size(), 3u);
  EXPECT_EQ(out_.memcpys[0].copy_kind, CopyKind::kHtoD);
  EXPECT_EQ(out_.memcpys[0].src_kind, MemoryKind::kPageable);
  EXPECT_FALSE(out_.memcpys[0].async);
  EXPECT_EQ(out_.memcpys[0].bytes, 1u << 20);
  EXPECT_EQ(out_.memcpys[1].copy_kind, CopyKind::kDtoH);
  EXPECT_EQ(out_.memcpys[1].dst_kind, MemoryKind::kPinned);
  EXPECT_TRUE(out_.memcpys[1].async);
  EXPECT_EQ(out_.memcpys[2].copy_kind, CopyKind::kPtoP);
  EXPECT_EQ(out_.memcpys[2].dst_device_id, 3u);
}

TEST_F(ActivityParserTest, SyncMemsetMemoryAndOverhead) {
  BufferBuilder b;
  {
    auto& c = b.Add<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
    c.contextId = 5;
    c.deviceId = 2;
  }
  {
    auto& s = b.Add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    s.contextId = 5;
    s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    s.start = 100;
    s.end = 900;
    s.correlationId = 11;
  }
  {
    auto& m = b.Add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
    m.bytes = 256;
    m.value = 7;
    m.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.start = 200;
    m.end = 210;
  }
  {
    auto& m = b.Add<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.address = 0x7f0000000000;
    m.bytes = 2 << 20;
    m.timestamp = 50;
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  }
  {
    auto& o = b.Add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.threadId = 55;
    o.start = 1;
    o.end = 2;
  }
  {
    auto& pool = b.Add<CUpti_ActivityMemoryPool3>(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
    pool.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
    pool.size = 1 << 30;
    pool.utilizedSize = 1 << 20;
    pool.releaseThreshold = 1 << 25;
  }
  Parse(b);
  ASSERT_EQ(out_.syncs.size(), 1u);
  EXPECT_EQ(out_.syncs[0].sync_kind, SyncKind::kContext);
  EXPECT_EQ(out_.syncs[0].stream, (StreamKey{2, 5, 0}));  // device from the CONTEXT record
  ASSERT_EQ(out_.memsets.size(), 1u);
  EXPECT_EQ(out_.memsets[0].value, 7u);
  EXPECT_TRUE(out_.memsets[0].async);
  ASSERT_EQ(out_.memory.size(), 1u);
  EXPECT_EQ(out_.memory[0].op, MemoryOpKind::kAlloc);
  EXPECT_TRUE(out_.memory[0].from_pool);
  EXPECT_EQ(out_.memory[0].bytes, 2u << 20);
  ASSERT_EQ(out_.overheads.size(), 1u);
  EXPECT_EQ(strings_.Get(out_.overheads[0].kind), "cupti_buffer_flush");
  EXPECT_EQ(out_.overheads[0].thread_id, 55u);
  ASSERT_EQ(out_.memory_pools.size(), 1u);
  EXPECT_EQ(out_.memory_pools[0].op, PoolOpKind::kTrimmed);
  EXPECT_EQ(out_.memory_pools[0].utilized_bytes, 1u << 20);
  EXPECT_EQ(out_.memory_pools[0].release_threshold, 1u << 25);
  EXPECT_EQ(parser_.stats().skipped_kinds, 0u);
}

TEST_F(ActivityParserTest, GraphTraceAndExternalCorrelation) {
  BufferBuilder b;
  {
    auto& g = b.Add<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    g.start = 100;
    g.end = 900;
    g.correlationId = 77;
    g.deviceId = 1;
    g.contextId = 2;
    g.streamId = 3;
    g.graphId = 42;
  }
  {
    auto& x = b.Add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    x.externalId = 123456789;
    x.correlationId = 77;
  }
  Parse(b);
  ASSERT_EQ(out_.graph_launches.size(), 1u);
  EXPECT_EQ(out_.graph_launches[0].graph_id, 42u);
  EXPECT_EQ(out_.graph_launches[0].stream, (StreamKey{1, 2, 3}));
  EXPECT_EQ(out_.graph_launches[0].end_ns - out_.graph_launches[0].start_ns, 800);
  ASSERT_EQ(out_.external_correlations.size(), 1u);
  EXPECT_EQ(out_.external_correlations[0].correlation_id, 77u);
  EXPECT_EQ(out_.external_correlations[0].external_id, 123456789u);
  EXPECT_EQ(out_.external_correlations[0].external_kind,
            static_cast<uint32_t>(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0));
}

TEST_F(ActivityParserTest, NvtxRangesPairAcrossBuffersWithNestingDepth) {
  BufferBuilder first;
  auto add_marker = [](BufferBuilder& b, CUpti_ActivityFlag flag, uint32_t id, uint64_t ts,
                       const char* name) {
    auto& m = b.Add<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
    m.flags = flag;
    m.id = id;
    m.timestamp = ts;
    m.name = name;
    m.domain = nullptr;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.threadId = 100;
  };
  add_marker(first, CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 1000, "ProfilerStep#3");
  add_marker(first, CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 1100, "forward");
  add_marker(first, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3, 1150, "checkpoint");
  Parse(first);
  EXPECT_TRUE(out_.nvtx_ranges.empty());  // nothing closed yet
  ASSERT_EQ(out_.nvtx_marks.size(), 1u);

  BufferBuilder second;
  add_marker(second, CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 1900, nullptr);
  add_marker(second, CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 2000, nullptr);
  add_marker(second, CUPTI_ACTIVITY_FLAG_MARKER_END, 77, 2100, nullptr);  // never started
  Parse(second);
  ASSERT_EQ(out_.nvtx_ranges.size(), 2u);
  EXPECT_EQ(strings_.Get(out_.nvtx_ranges[0].message), "forward");
  EXPECT_EQ(out_.nvtx_ranges[0].depth, 1u);
  EXPECT_EQ(strings_.Get(out_.nvtx_ranges[1].message), "ProfilerStep#3");
  EXPECT_EQ(out_.nvtx_ranges[1].depth, 0u);
  EXPECT_EQ(out_.nvtx_ranges[1].start_ns, 1000);
  EXPECT_EQ(out_.nvtx_ranges[1].end_ns, 2000);
  EXPECT_EQ(out_.nvtx_ranges[1].thread_id, 100u);
  EXPECT_EQ(parser_.stats().unpaired_markers, 1u);
}

TEST_F(ActivityParserTest, OpenRangesAreBounded) {
  BufferBuilder b;
  for (uint32_t i = 0; i < kMaxOpenNvtxRanges + 10; ++i) {
    auto& m = b.Add<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
    m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    m.id = i + 1;
    m.name = "leak";
  }
  Parse(b);
  BufferBuilder end;
  auto& m = end.Add<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  m.id = 1;  // the oldest: evicted
  Parse(end);
  EXPECT_TRUE(out_.nvtx_ranges.empty());
  EXPECT_EQ(parser_.stats().unpaired_markers, 1u);
}

TEST_F(ActivityParserTest, DeviceRecordsBecomeDeviceInfo) {
  BufferBuilder b;
  auto& d = b.Add<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
  d.id = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.numMultiprocessors = 132;
  d.globalMemorySize = 80ull << 30;
  d.computeCapabilityMajor = 9;
  Parse(b);
  ASSERT_EQ(parser_.devices().size(), 1u);
  EXPECT_EQ(parser_.devices()[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(parser_.devices()[0].sm_count, 132u);
  EXPECT_EQ(parser_.devices()[0].cc_major, 9u);
}

}  // namespace
}  // namespace gpuspy::inject
