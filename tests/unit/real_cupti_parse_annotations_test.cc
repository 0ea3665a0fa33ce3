// The record kinds that annotate GPU work (NVTX markers, graph launches, CUPTI overhead, external
// correlation ids) and the records the parser must step over or drop (kinds it does not model,
// GPU records CUPTI could not time, a walk the real library abandons), walked by the REAL
// libcupti and checked field by field. Skipped only where the toolkit's libcupti is absent.
#include <cstring>

#include "tests/unit/real_cupti_parse_fixture.h"

namespace gpuspy::inject {
namespace {

TEST_F(RealCuptiParseTest, NvtxGraphsOverheadAndExternalIdsKeepEveryField) {
  RecordBuffer b;
  auto marker = [&](CUpti_ActivityFlag flags, uint32_t id, uint64_t t, const char* name,
                    const char* domain) {
    auto& m = b.Add<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
    m.flags = flags;
    m.timestamp = t;
    m.id = id;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = 4242;
    m.objectId.pt.threadId = kThread;
    m.name = name;  // CUPTI leaves the name null on END records
    m.domain = domain;
  };
  marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 9, kT0 + 10, "ProfilerStep#3", nullptr);
  marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 10, kT0 + 20, "forward", nullptr);
  marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 11, kT0 + 25, "checkpoint", "gpuspy");
  marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 10, kT0 + 30, nullptr, nullptr);
  marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 9, kT0 + 40, nullptr, nullptr);
  {
    auto& g = b.Add<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    g.correlationId = 1501;
    g.start = kT0 + 50;
    g.end = kT0 + 90;
    g.deviceId = kDevice;
    g.graphId = 17;
    g.contextId = kContext;
    g.streamId = kStream;
    g.endDeviceId = kDevice;
    g.endContextId = kContext;
  }
  {
    auto& o = b.Add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.processId = 4242;
    o.objectId.pt.threadId = kThread;
    o.start = kT0 + 100;
    o.end = kT0 + 180;
    o.correlationId = 0;
  }
  {
    auto& x = b.Add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    x.externalId = 123'456'789'012ull;
    x.correlationId = 1001;
  }
  Parse(b);
  ASSERT_EQ(out_.nvtx_ranges.size(), 2u);
  // Ranges come out as they end: the inner one first, one level deeper.
  EXPECT_EQ(Str(out_.nvtx_ranges[0].message), "forward");
  EXPECT_EQ(out_.nvtx_ranges[0].start_ns, static_cast<int64_t>(kT0 + 20));
  EXPECT_EQ(out_.nvtx_ranges[0].end_ns, static_cast<int64_t>(kT0 + 30));
  EXPECT_EQ(out_.nvtx_ranges[0].depth, 1u);
  EXPECT_EQ(out_.nvtx_ranges[0].thread_id, kThread);
  EXPECT_EQ(Str(out_.nvtx_ranges[1].message), "ProfilerStep#3");
  EXPECT_EQ(Str(out_.nvtx_ranges[1].domain), "");
  EXPECT_EQ(out_.nvtx_ranges[1].start_ns, static_cast<int64_t>(kT0 + 10));
  EXPECT_EQ(out_.nvtx_ranges[1].end_ns, static_cast<int64_t>(kT0 + 40));
  EXPECT_EQ(out_.nvtx_ranges[1].depth, 0u);
  ASSERT_EQ(out_.nvtx_marks.size(), 1u);
  EXPECT_EQ(out_.nvtx_marks[0].timestamp_ns, static_cast<int64_t>(kT0 + 25));
  EXPECT_EQ(Str(out_.nvtx_marks[0].message), "checkpoint");
  EXPECT_EQ(Str(out_.nvtx_marks[0].domain), "gpuspy");
  EXPECT_EQ(out_.nvtx_marks[0].thread_id, kThread);
  EXPECT_EQ(parser_.stats().unpaired_markers, 0u);

  ASSERT_EQ(out_.graph_launches.size(), 1u);
  EXPECT_EQ(out_.graph_launches[0],
            (GraphLaunchEvent{static_cast<int64_t>(kT0 + 50), static_cast<int64_t>(kT0 + 90), 1501,
                              {kDevice, kContext, kStream}, 17}));
  ASSERT_EQ(out_.overheads.size(), 1u);
  EXPECT_EQ(out_.overheads[0].start_ns, static_cast<int64_t>(kT0 + 100));
  EXPECT_EQ(out_.overheads[0].end_ns, static_cast<int64_t>(kT0 + 180));
  EXPECT_EQ(Str(out_.overheads[0].kind), "cupti_buffer_flush");
  EXPECT_EQ(out_.overheads[0].thread_id, kThread);
  ASSERT_EQ(out_.external_correlations.size(), 1u);
  EXPECT_EQ(out_.external_correlations[0],
            (ExternalCorrelationEvent{1001, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                      123'456'789'012ull}));
}

// The field checks catch a layout the parser does not expect even when the size is right: a
// MEMCPY record laid out as if a new 8-byte field had been inserted after `kind` (the rest moved
// down, the struct's size unchanged) walks fine with the real library, but the fields the parser
// reads at CUDA 13.0's offsets are not the ones written. A new CUPTI that did this would fail
// CopiesAndFillsKeepDirectionMemoryKindsBytesAndAsync the same way.
TEST_F(RealCuptiParseTest, AFieldAtAnotherOffsetIsCaughtThoughTheSizeIsRight) {
  CUpti_ActivityMemcpy6 want{};
  want.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  want.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  want.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  want.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  want.bytes = 64ull << 20;
  want.start = kT0 + 200'000;
  want.end = kT0 + 2'900'000;
  want.deviceId = kDevice;
  want.contextId = kContext;
  want.streamId = kStream;
  want.correlationId = 1301;
  RecordBuffer b;
  uint8_t* at = b.Append(CUPTI_ACTIVITY_KIND_MEMCPY, sizeof(CUpti_ActivityMemcpy6));
  constexpr size_t kInserted = 8;
  const size_t after_kind = sizeof(want.kind) + sizeof(want.copyKind) + sizeof(want.srcKind) +
                            sizeof(want.dstKind) + sizeof(want.flags);  // the 8-byte head
  const auto* src = reinterpret_cast<const uint8_t*>(&want);
  std::memcpy(at, src, after_kind);
  std::memcpy(at + after_kind + kInserted, src + after_kind,
              sizeof(want) - after_kind - kInserted);
  Parse(b);  // the real walker steps it by its (unchanged) size: one record
  ASSERT_EQ(out_.memcpys.size(), 1u);
  const MemcpyEvent intended{static_cast<int64_t>(want.start), static_cast<int64_t>(want.end),
                             want.correlationId, {kDevice, kContext, kStream}, CopyKind::kHtoD,
                             MemoryKind::kPinned, MemoryKind::kDevice, false, want.bytes,
                             kDevice, kDevice};
  EXPECT_NE(out_.memcpys[0], intended);
  // Each field is read one field early: `bytes` is the inserted zeros, `start` the written bytes.
  EXPECT_EQ(out_.memcpys[0].bytes, 0u);
  EXPECT_EQ(out_.memcpys[0].start_ns, static_cast<int64_t>(want.bytes));
  EXPECT_EQ(out_.memcpys[0].end_ns, static_cast<int64_t>(want.start));
}

TEST_F(RealCuptiParseTest, KindsGpuspyDoesNotModelAreCountedAndSteppedOver) {
  RecordBuffer b;
  // The real walker knows these kinds' sizes; the parser must skip them and keep going.
  b.Add<CUpti_ActivityStream>(CUPTI_ACTIVITY_KIND_STREAM);
  b.Add<CUpti_ActivityName>(CUPTI_ACTIVITY_KIND_NAME);
  {
    auto& x = b.Add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    x.externalId = 5;
    x.correlationId = 6;
  }
  Parse(b);
  EXPECT_EQ(parser_.stats().skipped_kinds, 2u);
  ASSERT_EQ(out_.external_correlations.size(), 1u);
  EXPECT_EQ(out_.external_correlations[0].external_id, 5u);
}

TEST_F(RealCuptiParseTest, GpuRecordsCuptiCouldNotTimeAreDroppedAndCounted) {
  RecordBuffer b;
  {
    auto& k = b.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.start = CUPTI_TIMESTAMP_UNKNOWN;  // "no timing information ... for lack of device memory"
    k.end = CUPTI_TIMESTAMP_UNKNOWN;
    k.correlationId = 1;
    k.name = "untimed";
  }
  {
    auto& m = b.Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.start = kT0;
    m.end = CUPTI_TIMESTAMP_UNKNOWN;
    m.bytes = 8;
  }
  {
    auto& k = b.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.start = kT0;
    k.end = kT0 + 1'000;
    k.correlationId = 2;
    k.name = "timed";
  }
  Parse(b);
  ASSERT_EQ(out_.kernels.size(), 1u);
  EXPECT_EQ(Str(out_.kernels[0].name), "timed");
  EXPECT_TRUE(out_.memcpys.empty());
  EXPECT_EQ(parser_.stats().untimed_records, 2u);
  // Nothing at t=0 stretches the batch's time range back to the epoch.
  EXPECT_EQ(out_.TimeRange().first, static_cast<int64_t>(kT0));
}

TEST_F(RealCuptiParseTest, AWalkTheRealLibraryAbandonsCountsTheBufferAsUnreadable) {
  RecordBuffer good;
  good.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).correlationId = 1;
  Parse(good);
  EXPECT_EQ(parser_.stats().unreadable_buffers, 0u) << "MAX_LIMIT_REACHED is the normal end";

  RecordBuffer bad;
  bad.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).correlationId = 2;
  bad.Append(static_cast<CUpti_ActivityKind>(CUPTI_ACTIVITY_KIND_COUNT + 1), 40);
  bad.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).correlationId = 3;
  parser_.ParseBuffer(bad.data(), bad.size(), &out_);
  ASSERT_EQ(out_.apis.size(), 2u) << "the real walker stops at the record it cannot size";
  EXPECT_EQ(out_.apis[1].correlation_id, 2u);
  EXPECT_EQ(parser_.stats().unreadable_buffers, 1u);
}

}  // namespace
}  // namespace gpuspy::inject
