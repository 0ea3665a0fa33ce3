// The Kineto trace importer on hand-written traces: mapping of each category, exact timestamps,
// and bad input (invalid JSON, truncated gzip, wrong types, negative durations).
#include "importers/kineto/kineto_reader.h"

#include <cstring>

#include <zlib.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "importers/kineto/python_call_sites.h"
#include "importers/kineto/trace_bytes.h"
#include "tests/support/subprocess.h"

namespace gpuspy::importers {
namespace {

constexpr char kTrace[] = R"json({
  "schemaVersion": 1,
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "deviceProperties": [{"id": 0, "name": "NVIDIA A100-PG509-200", "totalGlobalMem": 42297524224,
                        "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
  "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 11, "tid": 12,
     "ts": 1000.5, "dur": 500, "args": {"External id": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 11, "tid": 12,
     "ts": 1001.25, "dur": 5.5, "args": {"cbid": 211, "correlation": 99}},
    {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_tn", "pid": 0, "tid": 7,
     "ts": 1010, "dur": 100.001,
     "args": {"device": 0, "context": 1, "stream": 7, "correlation": 99, "grid": [80, 2, 1],
              "block": [256, 1, 1], "registers per thread": 96, "shared memory": 1024,
              "Input Dims": [[1, 2], [3]]}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
     "tid": 7, "ts": 1120, "dur": 12, "args": {"device": 0, "context": 1, "stream": 7,
     "correlation": 100, "bytes": 92928}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1140,
     "dur": 4, "args": {"device": 0, "stream": 7, "correlation": 101, "bytes": 20736}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 1150,
     "dur": 9, "args": {"cuda_sync_kind": "Stream Sync", "stream": 7, "correlation": 102}},
    {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 11, "tid": 12,
     "ts": 1160, "dur": 47.768, "args": {"cbid": 307, "correlation": 103}},
    {"ph": "X", "cat": "kernel", "name": "bad", "pid": 0, "tid": 7, "ts": 1200, "dur": -5},
    {"ph": "X", "cat": "kernel", "name": "bad ts", "pid": 0, "tid": 7, "ts": "soon", "dur": 5},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 11, "tid": 12, "ts": 1000, "dur": 3},
    {"ph": "s", "cat": "ac2g", "id": 99, "pid": 11, "tid": 12, "ts": 1001},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#7", "pid": 0, "tid": 7, "ts": 1010, "dur": 130}
  ]
})json";

TEST(KinetoReader, MapsEveryGpuCategoryWithExactTimes) {
  auto t = ParseKinetoTrace(kTrace);
  ASSERT_TRUE(t.ok()) << t.status();
  const EventColumns& ev = t->events;
  ASSERT_EQ(ev.kernels.size(), 1u);
  const KernelEvent& k = ev.kernels[0];
  EXPECT_EQ(k.start_ns, 1'010'000);
  EXPECT_EQ(k.end_ns, 1'110'001);  // 100.001 us, not rounded through a double
  EXPECT_EQ(k.correlation_id, 99u);
  EXPECT_EQ(t->strings.Get(k.name), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(k.stream, (StreamKey{0, 1, 7}));
  EXPECT_EQ(k.shape.grid_x, 80u);
  EXPECT_EQ(k.shape.grid_y, 2u);
  EXPECT_EQ(k.shape.block_x, 256u);
  EXPECT_EQ(k.shape.registers_per_thread, 96u);
  EXPECT_EQ(k.shape.static_shared_bytes, 1024u);

  ASSERT_EQ(ev.apis.size(), 2u);
  EXPECT_EQ(ev.apis[0].start_ns, 1'001'250);
  EXPECT_EQ(ev.apis[0].end_ns, 1'006'750);
  EXPECT_EQ(ev.apis[0].correlation_id, 99u);
  EXPECT_EQ(ev.apis[0].cbid, 211u);
  EXPECT_EQ(ev.apis[0].thread_id, 12u);
  EXPECT_EQ(ev.apis[1].domain, ApiDomain::kDriver);

  ASSERT_EQ(ev.memcpys.size(), 1u);
  EXPECT_EQ(ev.memcpys[0].copy_kind, CopyKind::kHtoD);
  EXPECT_EQ(ev.memcpys[0].src_kind, MemoryKind::kPageable);
  EXPECT_EQ(ev.memcpys[0].dst_kind, MemoryKind::kDevice);
  EXPECT_FALSE(ev.memcpys[0].async);
  EXPECT_EQ(ev.memcpys[0].bytes, 92928u);
  ASSERT_EQ(ev.memsets.size(), 1u);
  EXPECT_EQ(ev.memsets[0].bytes, 20736u);
  ASSERT_EQ(ev.syncs.size(), 1u);
  EXPECT_EQ(ev.syncs[0].sync_kind, SyncKind::kStream);
  // CPU-side ProfilerStep ranges become step ranges; their GPU-side copies are not duplicated.
  // ATen ops are host ranges too (domain cpu_op): they say what the host did in idle gaps.
  ASSERT_EQ(ev.nvtx_ranges.size(), 2u);
  EXPECT_EQ(t->strings.Get(ev.nvtx_ranges[0].message), "aten::mm");
  EXPECT_EQ(t->strings.Get(ev.nvtx_ranges[0].domain), kCpuOpDomain);
  EXPECT_EQ(ev.nvtx_ranges[0].thread_id, 12u);
  EXPECT_EQ(t->strings.Get(ev.nvtx_ranges[1].message), "ProfilerStep#7");
  EXPECT_EQ(t->strings.Get(ev.nvtx_ranges[1].domain), kUserAnnotationDomain);
  EXPECT_EQ(ev.nvtx_ranges[1].start_ns, 1'000'500);
}

// PyTorch 1.8-1.10 (2021): capitalised categories, string thread ids ("stream 7" on the GPU),
// integer microseconds, "External id" on ops and "external id" elsewhere, no deviceProperties.
// The same events as today's names, read the same way.
TEST(KinetoReader, The2021DialectIsReadAsTheSameEvents) {
  auto t = ParseKinetoTrace(R"json({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "aten::conv2d", "pid": 119376, "tid": "2248185664",
     "ts": 1610366577446000, "dur": 40, "args": {"Device": 0, "External id": 62}},
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 119376, "tid": "2248185664",
     "ts": 1610366577446010, "dur": 6, "args": {"cbid": 211, "correlation": 627, "external id": 62}},
    {"ph": "X", "cat": "Kernel", "name": "void implicit_convolve_sgemm<float>", "pid": 0,
     "tid": "stream 7", "ts": 1610366577446312, "dur": 1010,
     "args": {"device": 0, "context": 1, "stream": 7, "correlation": 627, "external id": 62}},
    {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
     "tid": "stream 7", "ts": 1610366575900902, "dur": 3342,
     "args": {"device": 0, "context": 1, "stream": 7, "correlation": 11, "bytes": 19267584}},
    {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 23",
     "ts": 1610366576548799, "dur": 1,
     "args": {"device": 0, "context": 1, "stream": 23, "correlation": 272, "bytes": 15360}}]})json");
  ASSERT_TRUE(t.ok()) << t.status();
  const EventColumns& ev = t->events;
  ASSERT_EQ(ev.kernels.size(), 1u);
  EXPECT_EQ(ev.kernels[0].start_ns, 1610366577446312'000);
  EXPECT_EQ(ev.kernels[0].stream, (StreamKey{0, 1, 7}));
  EXPECT_EQ(ev.kernels[0].correlation_id, 627u);
  ASSERT_EQ(ev.apis.size(), 1u);
  EXPECT_EQ(ev.apis[0].correlation_id, 627u);
  EXPECT_EQ(ev.apis[0].thread_id, 2248185664u);
  ASSERT_EQ(ev.memcpys.size(), 1u);
  EXPECT_EQ(ev.memcpys[0].src_kind, MemoryKind::kPageable);
  ASSERT_EQ(ev.memsets.size(), 1u);
  ASSERT_EQ(ev.nvtx_ranges.size(), 1u);
  EXPECT_EQ(t->strings.Get(ev.nvtx_ranges[0].domain), kCpuOpDomain);  // an ATen op, as cpu_op
}

// A kernel record written twice is one kernel; two kernels that differ in anything (here the
// correlation id) are two, even at the same start.
TEST(KinetoReader, DuplicateGpuRecordsAreOneEventAndCounted) {
  const std::string k1 = R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":110,"dur":50,"args":{"correlation":1,"device":0,"stream":7}})";
  const std::string k2 = R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":110,"dur":50,"args":{"correlation":2,"device":0,"stream":7}})";
  const std::string c1 = R"j({"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":200,"dur":5,"args":{"correlation":3,"device":0,"stream":7,"bytes":4096}})j";
  auto t = ParseKinetoTrace(R"({"traceEvents":[)" + k1 + "," + k2 + "," + k1 + "," + c1 + "," + c1 +
                            "," + k1 + "]}");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->events.kernels.size(), 2u);
  EXPECT_NE(t->events.kernels[0].correlation_id, t->events.kernels[1].correlation_id);
  EXPECT_EQ(t->events.memcpys.size(), 1u);
  EXPECT_EQ(t->stats.skipped.at("duplicate kernel record"), 2u);
  EXPECT_EQ(t->stats.skipped.at("duplicate memcpy record"), 1u);
}

// Timestamps before the trace's zero (a kernel launched before the profiler's base time) are
// kept where they are, in time order, not wrapped or rejected.
TEST(KinetoReader, NegativeTimestampsKeepTheirPlaceInTime) {
  auto t = ParseKinetoTrace(
      R"({"traceEvents":[)"
      R"({"ph":"X","cat":"kernel","name":"late","pid":0,"tid":7,"ts":10,"dur":5,"args":{"correlation":2,"stream":7}},)"
      R"({"ph":"X","cat":"kernel","name":"early","pid":0,"tid":7,"ts":-40.5,"dur":20,"args":{"correlation":1,"stream":7}}]})");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->events.kernels.size(), 2u);
  EXPECT_EQ(t->events.kernels[0].start_ns, -40'500);
  EXPECT_EQ(t->events.kernels[0].end_ns, -20'500);
  EXPECT_EQ(t->events.kernels[1].start_ns, 10'000);
}

// Host threads' names come from the thread_name metadata of the profiled process only (pid 0's
// "threads" are GPU streams); the metadata is still counted as skipped events.
TEST(KinetoReader, ThreadNamesOfTheProfiledProcessAreKept) {
  auto t = ParseKinetoTrace(
      R"x({"traceEvents":[)x"
      R"x({"ph":"M","name":"thread_name","pid":50,"tid":50,"args":{"name":"thread 50 (python3)"}},)x"
      R"x({"ph":"M","name":"thread_name","pid":50,"tid":52,"args":{"name":"thread 52 (pt_pin_memory)"}},)x"
      R"x({"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"stream 7 "}},)x"
      R"x({"ph":"M","name":"process_name","pid":50,"tid":0,"args":{"name":"python3"}},)x"
      R"x({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":50,"tid":50,"ts":1,"dur":2,"args":{"correlation":1}},)x"
      R"x({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5,"dur":5,"args":{"correlation":1,"stream":7}}]})x");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->identity.pid(), 50u);
  std::map<uint32_t, std::string> names;
  for (const auto& [tid, ref] : t->thread_names) names[tid] = std::string(t->strings.Get(ref));
  EXPECT_EQ(names, (std::map<uint32_t, std::string>{{50, "thread 50 (python3)"}, {52, "thread 52 (pt_pin_memory)"}}));
  EXPECT_EQ(t->stats.skipped.at("phase M"), 4u);
}

TEST(KinetoReader, IdentityFromDistributedInfoAndDeviceProperties) {
  auto t = ParseKinetoTrace(kTrace);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->identity.rank(), 3);
  EXPECT_EQ(t->identity.world_size(), 8);
  EXPECT_EQ(t->identity.pid(), 11u);
  ASSERT_EQ(t->identity.devices_size(), 1);
  EXPECT_EQ(t->identity.devices(0).name(), "NVIDIA A100-PG509-200");
  EXPECT_EQ(t->identity.devices(0).sm_count(), 108u);
  EXPECT_EQ(t->identity.devices(0).compute_capability_major(), 8u);
}

TEST(KinetoReader, BadEventsAreSkippedAndCountedNotFatal) {
  auto t = ParseKinetoTrace(kTrace);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->stats.trace_events, 12u);
  EXPECT_EQ(t->stats.skipped.at("negative duration"), 1u);
  EXPECT_EQ(t->stats.skipped.at("bad timestamp"), 1u);
  EXPECT_EQ(t->stats.imported.at("cpu_op"), 1u);
  EXPECT_EQ(t->stats.skipped.at("phase s"), 1u);
  EXPECT_EQ(t->stats.skipped.at("gpu_user_annotation"), 1u);
  EXPECT_EQ(t->stats.imported.at("kernel"), 1u);
}

// Regression (tests/fuzz/kineto_trace_fuzz, corpus crash-integer-beyond-int64.json): integers
// written beyond int64 ("4.2e29", or 30 digits, which the JSON parser hands over as a double)
// were converted with undefined behaviour. They are now ignored like any malformed number, and
// leave nothing behind (absl::SimpleAtoi had left the "1" of "1.8e19" as the correlation id).
TEST(KinetoReader, NumbersBeyondInt64AreIgnoredNotConverted) {
  auto t = ParseKinetoTrace(R"json({
    "deviceProperties": [{"id": 0, "totalGlobalMem": 422975249223372036854775807224,
                          "numSms": -1e300, "computeMajor": 9.3e18}],
    "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10,
                     "dur": 5, "args": {"correlation": 1.8e19, "stream": -9.3e18,
                                        "device": 1e300, "grid": [4e20, 1, 1]}}]})json");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->identity.devices_size(), 1);
  EXPECT_EQ(t->identity.devices(0).global_memory_bytes(), 0u);
  EXPECT_EQ(t->identity.devices(0).sm_count(), 0u);
  EXPECT_EQ(t->identity.devices(0).compute_capability_major(), 0u);
  ASSERT_EQ(t->events.kernels.size(), 1u);
  EXPECT_EQ(t->events.kernels[0].correlation_id, 0u);
  EXPECT_EQ(t->events.kernels[0].stream.stream_id, 0u);
}

TEST(KinetoReader, InvalidJsonNamesTheByteOffset) {
  auto t = ParseKinetoTrace(R"({"traceEvents": [{"ph": "X",, }]})");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("at byte 29"), std::string::npos) << t.status();
}

TEST(KinetoReader, NotATraceIsSaidSo) {
  auto t = ParseKinetoTrace(R"({"hello": "world"})");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("no traceEvents"), std::string::npos);
}

// The JSON parser stops at a NUL byte; a file of zeros was "unexpected end of input at byte 1".
TEST(KinetoReader, AFileOfZerosIsSaidNotToBeJson) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/zeros.json";
  std::ofstream(path, std::ios::binary) << std::string(64 << 10, '\0');
  auto t = ReadKinetoTrace(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(),
            path + ": not JSON (starts with byte 0x00; a trace starts with '{'): not a PyTorch "
                   "profiler (Kineto) trace");
}

TEST(KinetoReader, AnEmptyFileIsSaidToBeEmpty) {
  auto t = ParseKinetoTrace(" \n");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("the file is empty"), std::string::npos) << t.status();
}

// kTrace gzip'd into `path`.
void WriteGzippedTrace(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, kTrace, sizeof(kTrace) - 1);
  gzclose(f);
}

TEST(KinetoReader, ReadsGzipAndReportsTruncation) {
  testing::TempDir dir;
  const std::string gz = dir.path() + "/t.json.gz";
  WriteGzippedTrace(gz);
  auto whole = ReadKinetoTrace(gz);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->events.kernels.size(), 1u);

  const std::string bytes = testing::ReadFile(gz);
  const std::string cut = dir.path() + "/cut.json.gz";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  auto truncated = ReadKinetoTrace(cut);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), absl::StatusCode::kDataLoss) << truncated.status();
  EXPECT_NE(truncated.status().message().find("cut.json.gz"), std::string::npos);

  EXPECT_EQ(ReadKinetoTrace(dir.path() + "/missing.json").status().code(),
            absl::StatusCode::kNotFound);
}

// Concatenated members are one stream (gzip -c a b > c): the trailer names only the last one's
// size, so the whole is counted before it is inflated.
TEST(KinetoReader, ReadsAGzipFileOfSeveralMembers) {
  testing::TempDir dir;
  const std::string one = dir.path() + "/one.json.gz";
  WriteGzippedTrace(one);
  const std::string text(kTrace, sizeof(kTrace) - 1);
  const size_t half = text.size() / 2;
  const std::string two = dir.path() + "/two.json.gz";
  for (const std::string& part : {text.substr(0, half), text.substr(half)}) {
    gzFile f = gzopen(two.c_str(), "ab");
    gzwrite(f, part.data(), static_cast<unsigned>(part.size()));
    gzclose(f);
  }
  auto whole = ReadKinetoTrace(one);
  auto joined = ReadKinetoTrace(two);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_EQ(joined->events.kernels.size(), whole->events.kernels.size());
  EXPECT_EQ(joined->events.apis.size(), whole->events.apis.size());
  EXPECT_EQ(joined->events.nvtx_ranges.size(), whole->events.nvtx_ranges.size());
}

TEST(KinetoReader, AGzipFileWithALyingTrailerIsRefusedAsDamaged) {
  testing::TempDir dir;
  const std::string gz = dir.path() + "/liar.json.gz";
  WriteGzippedTrace(gz);
  std::string bytes = testing::ReadFile(gz);
  for (const uint32_t claim : {0xF0000000u, 1u}) {  // far too big, far too small
    std::memcpy(bytes.data() + bytes.size() - 4, &claim, 4);
    std::ofstream(gz, std::ios::binary | std::ios::trunc) << bytes;
    // gzip's own check of ISIZE rejects the stream: a DataLoss status, not a 4 GB buffer.
    auto t = ReadKinetoTrace(gz);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss) << t.status();
  }
}

// NCCL kernels as PyTorch's profiler writes them: what the collective moves is in the args.
constexpr char kNcclTrace[] = R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
     "pid": 0, "tid": 7, "ts": 2000, "dur": 50,
     "args": {"correlation": 31, "stream": 40, "Collective name": "_allgather_base",
              "In msg nelems": 10, "Out msg nelems": 40, "Group size": 4, "dtype": "BFloat16",
              "Process Group Name": "3", "Process Group Description": "tp", "Seq": 17}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
     "pid": 0, "tid": 7, "ts": 1000, "dur": 2636.669,
     "args": {"correlation": 30, "stream": 40, "Collective name": "allreduce",
              "In msg nelems": 6637568, "Out msg nelems": 6637568, "Group size": 2,
              "dtype": "Float", "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv", "pid": 0, "tid": 7, "ts": 3000,
     "dur": 5, "args": {"correlation": 32, "Collective name": "send", "In msg nelems": 8,
                        "dtype": "QUInt4x2", "Group size": 1e300, "seq": 4}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_Broadcast_RING_LL", "pid": 0, "tid": 7,
     "ts": 4000, "dur": 5, "args": {"correlation": 33}}
  ]})json";

TEST(KinetoReader, NcclKernelArgsBecomeCollectivesInKernelOrder) {
  auto t = ParseKinetoTrace(kNcclTrace);
  ASSERT_TRUE(t.ok()) << t.status();
  const EventColumns& ev = t->events;
  ASSERT_EQ(ev.kernels.size(), 4u);
  // The last kernel has no collective args: a kernel, nothing more.
  ASSERT_EQ(ev.collectives.size(), 3u);
  EXPECT_EQ(t->stats.collectives, 3u);
  EXPECT_EQ(t->stats.imported.at("kernel"), 4u);

  const CollectiveEvent& all_reduce = ev.collectives[0];  // the earliest kernel's, though listed second
  EXPECT_EQ(all_reduce.correlation_id, 30u);
  EXPECT_EQ(t->strings.Get(all_reduce.op), "allreduce");
  EXPECT_EQ(t->strings.Get(all_reduce.dtype), "Float");
  EXPECT_EQ(t->strings.Get(all_reduce.group), "0");
  EXPECT_EQ(all_reduce.in_bytes, 6637568u * 4);
  EXPECT_EQ(all_reduce.out_bytes, 6637568u * 4);
  EXPECT_EQ(all_reduce.group_size, 2u);
  EXPECT_EQ(all_reduce.sequence, -1);

  const CollectiveEvent& gather = ev.collectives[1];
  EXPECT_EQ(gather.correlation_id, 31u);
  EXPECT_EQ(t->strings.Get(gather.op), "_allgather_base");
  EXPECT_EQ(gather.in_bytes, 20u);   // 10 x 2
  EXPECT_EQ(gather.out_bytes, 80u);  // 40 x 2
  EXPECT_EQ(gather.group_size, 4u);
  EXPECT_EQ(t->strings.Get(gather.group), "3");
  EXPECT_EQ(gather.sequence, 17);

  // Sub-byte dtype: size unknown, so bytes are; a group size beyond uint32 likewise. "seq" too.
  const CollectiveEvent& send = ev.collectives[2];
  EXPECT_EQ(t->strings.Get(send.op), "send");
  EXPECT_EQ(send.in_bytes, 0u);
  EXPECT_EQ(send.out_bytes, 0u);
  EXPECT_EQ(send.group_size, 0u);
  EXPECT_EQ(send.group, 0u);
  EXPECT_EQ(send.sequence, 4);
}

// Elements x element size past 64 bits is unknown, not wrapped.
TEST(KinetoReader, CollectiveSizesThatOverflowAreUnknown) {
  auto t = ParseKinetoTrace(R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv", "pid": 0, "tid": 7, "ts": 5,
     "dur": 5, "args": {"correlation": 32, "Collective name": "send", "dtype": "ComplexDouble",
                        "In msg nelems": 9223372036854775807, "Out msg nelems": 3}}]})json");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->events.collectives.size(), 1u);
  EXPECT_EQ(t->events.collectives[0].in_bytes, 0u);
  EXPECT_EQ(t->events.collectives[0].out_bytes, 48u);
}

std::string SharedTrace(const std::string& name) {
  return std::string(SOURCE_DIR) + "/../shared/traces/" + name;
}

// Expected numbers computed with python3 (gzip + json) from the same file.
TEST(KinetoReader, RealNcclTraceYieldsItsTwentyOneCollectives) {
  const std::string path = SharedTrace("nccl_a100.json.gz");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  auto t = ReadKinetoTrace(path);
  ASSERT_TRUE(t.ok()) << t.status();
  const EventColumns& ev = t->events;
  ASSERT_EQ(ev.collectives.size(), 21u);
  EXPECT_EQ(t->stats.collectives, 21u);
  std::map<std::string, int> by_op;
  uint64_t in_bytes = 0, out_bytes = 0;
  std::map<uint64_t, std::string> kernel_by_corr;
  for (const auto& k : ev.kernels) kernel_by_corr[k.correlation_id] = t->strings.Get(k.name);
  for (const CollectiveEvent& c : ev.collectives) {
    by_op[std::string(t->strings.Get(c.op))]++;
    in_bytes += c.in_bytes;
    out_bytes += c.out_bytes;
    EXPECT_EQ(t->strings.Get(c.group), "0");
    EXPECT_EQ(c.group_size, 2u);
    EXPECT_EQ(c.sequence, -1);  // this PyTorch wrote no Seq
    ASSERT_TRUE(kernel_by_corr.contains(c.correlation_id));
    EXPECT_EQ(kernel_by_corr[c.correlation_id].rfind("ncclKernel_", 0), 0u);
  }
  EXPECT_EQ(by_op, (std::map<std::string, int>{{"allreduce", 15}, {"broadcast", 6}}));
  EXPECT_EQ(in_bytes, 307323096u);
  EXPECT_EQ(out_bytes, 307323096u);

  // In kernel (time) order: the first is the Float parameter broadcast, then a Long one.
  EXPECT_EQ(ev.collectives[0].correlation_id, 19832u);
  EXPECT_EQ(t->strings.Get(ev.collectives[0].op), "broadcast");
  EXPECT_EQ(ev.collectives[0].in_bytes, 53120u * 4);
  EXPECT_EQ(ev.collectives[1].correlation_id, 19878u);
  EXPECT_EQ(t->strings.Get(ev.collectives[1].dtype), "Long");
  EXPECT_EQ(ev.collectives[1].in_bytes, 53u * 8);
  EXPECT_EQ(ev.collectives[2].correlation_id, 25941u);
  EXPECT_EQ(t->strings.Get(ev.collectives[2].op), "allreduce");
  EXPECT_EQ(ev.collectives[2].in_bytes, 2049000u * 4);

  const auto big = std::find_if(ev.collectives.begin(), ev.collectives.end(),
                                [](const CollectiveEvent& c) { return c.correlation_id == 60047; });
  ASSERT_NE(big, ev.collectives.end());
  EXPECT_EQ(t->strings.Get(big->op), "allreduce");
  EXPECT_EQ(t->strings.Get(big->dtype), "Float");
  EXPECT_EQ(big->in_bytes, 6637568u * 4);
  EXPECT_EQ(big->out_bytes, 6637568u * 4);
}

TEST(KinetoReader, NcclKernelsWithoutCollectiveArgsYieldNone) {
  const std::string path = SharedTrace("sampled_rank-0.json.gz");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  auto t = ReadKinetoTrace(path);
  ASSERT_TRUE(t.ok()) << t.status();
  const auto nccl = std::count_if(t->events.kernels.begin(), t->events.kernels.end(),
                                  [&](const KernelEvent& k) {
                                    return t->strings.Get(k.name).find("nccl") != std::string::npos;
                                  });
  EXPECT_EQ(nccl, 10);
  EXPECT_TRUE(t->events.collectives.empty());
  EXPECT_EQ(t->stats.collectives, 0u);
}

TEST(KinetoReader, MicrosToNanosIsExact) {
  int64_t ns = 0;
  ASSERT_TRUE(MicrosToNanos("1695835572943613", &ns));
  EXPECT_EQ(ns, 1695835572943613000);
  ASSERT_TRUE(MicrosToNanos("2413669097444.592", &ns));
  EXPECT_EQ(ns, 2413669097444592);
  ASSERT_TRUE(MicrosToNanos("1.7", &ns));
  EXPECT_EQ(ns, 1700);
  ASSERT_TRUE(MicrosToNanos("0.0004", &ns));
  EXPECT_EQ(ns, 0);
  EXPECT_FALSE(MicrosToNanos("", &ns));
  EXPECT_FALSE(MicrosToNanos("abc", &ns));
  // Kineto's plain form and the rest (the general path) agree at the edges.
  const std::pair<const char*, int64_t> cases[] = {
      {"-0.5", -500}, {"12.5", 12500}, {"5.1234567", 5123}, {"007", 7000}, {"-3", -3000},
      {"12.", 12000}, {"+5", 5000}, {".5", 500}, {"1.5e3", 1500000}, {" 5", 5000}};
  for (const auto& [text, want] : cases) {
    ns = -1;
    EXPECT_TRUE(MicrosToNanos(text, &ns)) << text;
    EXPECT_EQ(ns, want) << text;
  }
  EXPECT_FALSE(MicrosToNanos("9223372036854775.807", &ns));  // past int64 ns
  EXPECT_FALSE(MicrosToNanos("5.x", &ns));
  // Eight digits at a time, and a non-digit inside such a block.
  ASSERT_TRUE(MicrosToNanos("12345678", &ns));
  EXPECT_EQ(ns, 12345678000);
  ASSERT_TRUE(MicrosToNanos("-123456789012345.9", &ns));
  EXPECT_EQ(ns, -123456789012345900);
  EXPECT_FALSE(MicrosToNanos("12345a78.5", &ns));
  EXPECT_FALSE(MicrosToNanos("1234567/", &ns));  // '/' is the byte before '0'
  EXPECT_FALSE(MicrosToNanos("1234567:", &ns));  // ':' the one after '9'
  // Whole parts past the unchecked 18 digits: zero padding still reads, overflow does not.
  ASSERT_TRUE(MicrosToNanos("0000000000000000001.5", &ns));
  EXPECT_EQ(ns, 1500);
  EXPECT_FALSE(MicrosToNanos("1000000000000000000", &ns));
}

}  // namespace
}  // namespace gpuspy::importers

namespace gpuspy::importers {
namespace {

// with_stack=True traces: each CUDA call gets the innermost user-code Python frame around it on
// its thread as its call site; torch's own frames are walked past.
TEST(KinetoReader, CallSitesComeFromTheInnermostUserPythonFrame) {
  auto t = ParseKinetoTrace(R"json({"traceEvents": [
    {"ph": "X", "cat": "python_function", "name": "train.py(57): <module>", "pid": 1, "tid": 2, "ts": 100, "dur": 100},
    {"ph": "X", "cat": "python_function", "name": "model.py(12): forward", "pid": 1, "tid": 2, "ts": 110, "dur": 40},
    {"ph": "X", "cat": "python_function", "name": "/usr/lib/python3/dist-packages/torch/nn/modules/module.py(1501): _call_impl", "pid": 1, "tid": 2, "ts": 115, "dur": 30},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 120, "dur": 5, "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 2, "ts": 160, "dur": 20, "args": {"correlation": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaFree", "pid": 1, "tid": 9, "ts": 160, "dur": 20, "args": {"correlation": 3}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMalloc", "pid": 1, "tid": 2, "ts": 300, "dur": 5, "args": {"correlation": 4}}
  ]})json");
  ASSERT_TRUE(t.ok()) << t.status();
  const auto& apis = t->events.apis;
  ASSERT_EQ(apis.size(), 4u);
  auto site = [&](const char* name) {
    for (const ApiEvent& a : apis) {
      if (t->strings.Get(a.name) == name) return std::string(t->strings.Get(a.call_site));
    }
    return std::string("?");
  };
  // Past torch's _call_impl, with its caller (as live capture writes it).
  EXPECT_EQ(site("cudaLaunchKernel"), "model.py:12 forward \u2190 train.py:57 <module>");
  EXPECT_EQ(site("cudaStreamSynchronize"), "train.py:57 <module>");  // forward had returned
  EXPECT_EQ(site("cudaFree"), "");    // another thread, no frames
  EXPECT_EQ(site("cudaMalloc"), "");  // after every frame closed
}

// Older with_stack=True traces carry the Python stack as a cpu_op's "Call stack" arg (innermost
// first) instead of python_function events: the CUDA calls inside the op get its innermost
// user-code frame; torch's frames are walked past; baseTimeNanoseconds shifts them alike.
TEST(KinetoReader, CallSitesComeFromACpuOpsCallStack) {
  auto t = ParseKinetoTrace(R"json({"baseTimeNanoseconds": 1000000000, "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::item", "pid": 1, "tid": 2, "ts": 100, "dur": 50,
     "args": {"Call stack": "/usr/lib/python3/dist-packages/torch/_tensor.py(970): item;train.py(57): train_step;train.py(90): <module>"}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 2, "ts": 200, "dur": 50,
     "args": {"Call stack": "/usr/lib/python3/dist-packages/torch/nn/functional.py(12): f"}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 2, "ts": 110, "dur": 30, "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 210, "dur": 5, "args": {"correlation": 2}}
  ]})json");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->events.apis.size(), 2u);
  EXPECT_EQ(t->strings.Get(t->events.apis[0].call_site),
            "train.py:57 train_step \u2190 train.py:90 <module>");
  EXPECT_EQ(t->events.apis[1].call_site, 0u);  // a stack of library frames only
  // The ops themselves stay host ranges; no extra range is added for the stack.
  EXPECT_EQ(t->events.nvtx_ranges.size(), 2u);
  EXPECT_EQ(UserFramesOfStack("a/torch/x.py(1): f;t.py(2): g;t.py(3): h;t.py(4): i", 2),
            (std::vector<std::string_view>{"t.py(2): g", "t.py(3): h"}));
}

// profile_memory=True traces: every CUDA [memory] event becomes an allocator usage sample
// (reserved in size, allocated in utilized_bytes), shifted by baseTimeNanoseconds like the rest;
// host-memory events and events without totals are skipped and counted, and none becomes a
// MemoryEvent (those are cudaMalloc'd segments, which alloc_churn counts).
TEST(KinetoReader, MemoryEventsBecomeAllocatorUsageSamples) {
  auto t = ParseKinetoTrace(R"json({"baseTimeNanoseconds": 1000000000, "traceEvents": [
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 11, "tid": 12,
     "ts": 20.5, "args": {"Total Reserved": 4194304, "Total Allocated": 1048576, "Addr": 1234,
                          "Device Id": 0, "Device Type": 1, "Bytes": 1048576}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 11, "tid": 12,
     "ts": 10, "args": {"Total Reserved": 2097152, "Total Allocated": 512, "Addr": 99,
                        "Device Id": 1, "Device Type": 1, "Bytes": 512}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 11, "tid": 12,
     "ts": 11, "args": {"Total Reserved": 0, "Total Allocated": 64, "Device Id": -1,
                        "Device Type": 0, "Bytes": 64}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 11, "tid": 12,
     "ts": 12, "args": {"Device Type": 1, "Bytes": 64}}
  ]})json");
  ASSERT_TRUE(t.ok()) << t.status();
  const EventColumns& ev = t->events;
  EXPECT_TRUE(ev.memory.empty());
  ASSERT_EQ(ev.memory_pools.size(), 2u);
  const MemoryPoolEvent& first = ev.memory_pools[0];  // in time order
  EXPECT_EQ(first.timestamp_ns, 1'000'010'000);
  EXPECT_EQ(first.op, PoolOpKind::kUsage);
  EXPECT_EQ(first.device_id, 1u);
  EXPECT_EQ(first.size, 2097152u);
  EXPECT_EQ(first.utilized_bytes, 512u);
  EXPECT_EQ(ev.memory_pools[1].timestamp_ns, 1'000'020'500);
  EXPECT_EQ(ev.memory_pools[1].size, 4194304u);
  EXPECT_EQ(ev.memory_pools[1].utilized_bytes, 1048576u);
  EXPECT_EQ(t->stats.imported.at("[memory]"), 2u);
  EXPECT_EQ(t->stats.skipped.at("[memory] not on a CUDA device"), 1u);
  EXPECT_EQ(t->stats.skipped.at("[memory] without allocator totals"), 1u);
}

}  // namespace
}  // namespace gpuspy::importers

namespace gpuspy::importers {
namespace {

// Strings are read in place unless they hold an escape; escaped keys and values must come out as
// the same text (a JSON parser that unescapes everything would give).
TEST(KinetoReader, EscapedKeysAndStringsReadLikePlainOnes) {
  auto t = ParseKinetoTrace(R"json({"traceEvents": [
    {"p\u0068": "X", "cat": "kern\u0065l", "name": "a\"b\\c\u00e9", "pid": 1, "tid": 2,
     "ts": 10, "dur": 5, "args": {"correl\u0061tion": 7, "stream": 3}},
    {"ph": "X", "cat": "kernel", "name": "plain", "pid": 1, "tid": 2, "ts": 20, "dur": 5,
     "args": {"correlation": 8}}]})json");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->events.kernels.size(), 2u);
  EXPECT_EQ(t->strings.Get(t->events.kernels[0].name), "a\"b\\c\xc3\xa9");
  EXPECT_EQ(t->events.kernels[0].correlation_id, 7u);
  EXPECT_EQ(t->events.kernels[0].stream.stream_id, 3u);
  EXPECT_EQ(t->strings.Get(t->events.kernels[1].name), "plain");
}

TEST(KinetoReader, TrailingTextAfterTheTraceIsAnError) {
  auto t = ParseKinetoTrace(R"({"traceEvents": [{"ph": "X"}]} {"x": 1})");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("not valid trace JSON at byte"), std::string::npos)
      << t.status();
}

}  // namespace
}  // namespace gpuspy::importers
