// DecodeBatch and ProcessDictionary::Apply on untrusted input: every malformed batch is rejected
// with InvalidArgument naming the column at fault, and the output is left untouched.
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <google/protobuf/stubs/logging.h>

#include "codec/batch_decoder.h"
#include "codec/batch_encoder.h"
#include "codec/process_dictionary.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy {
namespace {

using ::testing::HasSubstr;

// A valid batch with two events of every kind and every optional column present.
struct ValidBatch {
  StringTable strings;
  v1::EventBatch batch;
  ProcessDictionary dict;

  ValidBatch() {
    const StringRef k1 = strings.Intern("ampere_sgemm_128x64_tn");
    const StringRef k2 = strings.Intern("sm90_xmma_gemm_bf16bf16_bf16f32");
    const StringRef launch = strings.Intern("cudaLaunchKernel");
    const StringRef site = strings.Intern("train.py:42");
    const StringRef domain = strings.Intern("torch");
    const StringRef step = strings.Intern("ProfilerStep#1");
    const StringRef overhead = strings.Intern("cupti_buffer_flush");
    const StreamKey s0{0, 1, 7}, s1{1, 1, 13};
    EventColumns ev;
    ev.kernels = {{100, 200, 10, k1, s0, {1, 1, 1, 128, 1, 1, 32, 0, 0}, 0},
                  {150, 300, 12, k2, s1, {2, 1, 1, 256, 1, 1, 64, 0, 0}, 9}};
    ev.memcpys = {{50, 90, 11, s0, CopyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice,
                   true, 4096, 0, 0},
                  {60, 95, 13, s1, CopyKind::kPtoP, MemoryKind::kDevice, MemoryKind::kDevice,
                   true, 8192, 1, 0}};
    ev.memsets = {{70, 80, 14, s0, MemoryKind::kDevice, true, 64, 0},
                  {71, 81, 15, s1, MemoryKind::kDevice, false, 64, 255}};
    ev.syncs = {{300, 400, 16, s0, SyncKind::kStream}, {310, 410, 17, s1, SyncKind::kContext}};
    ev.memory = {{20, 18, s0, MemoryOpKind::kAlloc, MemoryKind::kDevice, true, 0x1000, 64},
                 {420, 19, s0, MemoryOpKind::kFree, MemoryKind::kDevice, true, 0x1000, 64}};
    ev.apis = {{40, 60, 10, ApiDomain::kRuntime, 211, launch, 77, site},
               {41, 61, 12, ApiDomain::kRuntime, 211, launch, 78, 0}};
    ev.nvtx_ranges = {{0, 500, domain, step, 77, 0}, {5, 400, 0, step, 78, 1}};
    ev.nvtx_marks = {{250, domain, step, 77}, {260, 0, step, 78}};
    ev.overheads = {{450, 460, overhead, 77}, {470, 480, overhead, 78}};
    const StringRef allreduce = strings.Intern("allreduce");
    const StringRef bf16 = strings.Intern("BFloat16");
    const StringRef group = strings.Intern("0");
    ev.collectives = {{10, allreduce, bf16, group, 1 << 20, 1 << 20, 8, 3},
                      {12, allreduce, 0, 0, 0, 0, 0, -1}};
    BatchEncoder encoder(&strings);
    encoder.Encode(ev, 1, LossCounters{}, &batch);
    EXPECT_TRUE(dict.Apply(batch.dictionary()).ok());
  }
};

// Pre-existing content of `out`, which a failed decode must not touch.
EventColumns Sentinel() {
  EventColumns out;
  out.kernels.push_back({1, 2, 3, 0, {}, {}, 0});
  out.apis.push_back({4, 5, 6, ApiDomain::kDriver, 1, 0, 9, 0});
  return out;
}

struct Corruption {
  const char* name;
  std::function<void(v1::EventBatch*)> mutate;
  const char* column;  // what the error message must name
};

void ExpectRejected(const Corruption& c) {
  SCOPED_TRACE(c.name);
  ValidBatch v;
  {  // The untouched batch decodes: each failure below is due to its mutation alone.
    EventColumns ok;
    ASSERT_TRUE(DecodeBatch(v.batch, v.dict, &ok).ok());
    ASSERT_EQ(ok.size(), 20u);
  }
  c.mutate(&v.batch);
  EventColumns out = Sentinel();
  const absl::Status st = DecodeBatch(v.batch, v.dict, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr(c.column));
  EXPECT_EQ(out, Sentinel());
}

TEST(BatchDecoderValidation, MismatchedColumnLengthsAreRejectedForEveryKind) {
  const std::vector<Corruption> cases = {
      {"kernel duration", [](auto* b) { b->mutable_kernels()->add_duration_ns(1); },
       "kernels.duration_ns"},
      {"kernel correlation",
       [](auto* b) { b->mutable_kernels()->mutable_correlation_delta()->RemoveLast(); },
       "kernels.correlation_delta"},
      {"kernel signature", [](auto* b) { b->mutable_kernels()->add_signature_ref(1); },
       "kernels.signature_ref"},
      {"kernel stream", [](auto* b) { b->mutable_kernels()->mutable_stream_ref()->RemoveLast(); },
       "kernels.stream_ref"},
      {"kernel graph id", [](auto* b) { b->mutable_kernels()->add_graph_id(3); },
       "kernels.graph_id"},
      {"kernel starts short",
       [](auto* b) { b->mutable_kernels()->mutable_start_delta_ns()->RemoveLast(); },
       "kernels.duration_ns"},
      {"memcpy duration", [](auto* b) { b->mutable_memcpys()->add_duration_ns(1); },
       "memcpys.duration_ns"},
      {"memcpy correlation", [](auto* b) { b->mutable_memcpys()->add_correlation_delta(1); },
       "memcpys.correlation_delta"},
      {"memcpy stream", [](auto* b) { b->mutable_memcpys()->add_stream_ref(1); },
       "memcpys.stream_ref"},
      {"memcpy bytes", [](auto* b) { b->mutable_memcpys()->mutable_bytes()->RemoveLast(); },
       "memcpys.bytes"},
      {"memcpy kinds", [](auto* b) { b->mutable_memcpys()->add_packed_kinds(1); },
       "memcpys.packed_kinds"},
      {"memcpy src device", [](auto* b) { b->mutable_memcpys()->add_src_device_id(1); },
       "memcpys.src_device_id"},
      {"memcpy dst device",
       [](auto* b) { b->mutable_memcpys()->mutable_dst_device_id()->RemoveLast(); },
       "memcpys.dst_device_id"},
      {"memset duration", [](auto* b) { b->mutable_memsets()->add_duration_ns(1); },
       "memsets.duration_ns"},
      {"memset correlation", [](auto* b) { b->mutable_memsets()->add_correlation_delta(1); },
       "memsets.correlation_delta"},
      {"memset stream", [](auto* b) { b->mutable_memsets()->add_stream_ref(1); },
       "memsets.stream_ref"},
      {"memset bytes", [](auto* b) { b->mutable_memsets()->add_bytes(1); }, "memsets.bytes"},
      {"memset value", [](auto* b) { b->mutable_memsets()->mutable_value()->RemoveLast(); },
       "memsets.value"},
      {"memset kinds", [](auto* b) { b->mutable_memsets()->add_packed_kinds(1); },
       "memsets.packed_kinds"},
      {"sync duration", [](auto* b) { b->mutable_syncs()->add_duration_ns(1); },
       "syncs.duration_ns"},
      {"sync correlation", [](auto* b) { b->mutable_syncs()->add_correlation_delta(1); },
       "syncs.correlation_delta"},
      {"sync stream", [](auto* b) { b->mutable_syncs()->add_stream_ref(1); }, "syncs.stream_ref"},
      {"sync kind", [](auto* b) { b->mutable_syncs()->mutable_sync_kind()->RemoveLast(); },
       "syncs.sync_kind"},
      {"memory correlation", [](auto* b) { b->mutable_memory()->add_correlation_delta(1); },
       "memory.correlation_delta"},
      {"memory stream", [](auto* b) { b->mutable_memory()->add_stream_ref(1); },
       "memory.stream_ref"},
      {"memory address", [](auto* b) { b->mutable_memory()->add_address_delta(1); },
       "memory.address_delta"},
      {"memory bytes", [](auto* b) { b->mutable_memory()->mutable_bytes()->RemoveLast(); },
       "memory.bytes"},
      {"memory kinds", [](auto* b) { b->mutable_memory()->add_packed_kinds(1); },
       "memory.packed_kinds"},
      {"api duration", [](auto* b) { b->mutable_apis()->add_duration_ns(1); },
       "apis.duration_ns"},
      {"api correlation", [](auto* b) { b->mutable_apis()->add_correlation_delta(1); },
       "apis.correlation_delta"},
      {"api ref", [](auto* b) { b->mutable_apis()->add_api_ref(1); }, "apis.api_ref"},
      {"api thread", [](auto* b) { b->mutable_apis()->mutable_thread_ref()->RemoveLast(); },
       "apis.thread_ref"},
      {"api call site", [](auto* b) { b->mutable_apis()->add_call_site_ref(0); },
       "apis.call_site_ref"},
      {"nvtx range duration", [](auto* b) { b->mutable_nvtx_ranges()->add_duration_ns(1); },
       "nvtx_ranges.duration_ns"},
      {"nvtx range domain", [](auto* b) { b->mutable_nvtx_ranges()->add_domain_ref(0); },
       "nvtx_ranges.domain_ref"},
      {"nvtx range message",
       [](auto* b) { b->mutable_nvtx_ranges()->mutable_message_ref()->RemoveLast(); },
       "nvtx_ranges.message_ref"},
      {"nvtx range thread", [](auto* b) { b->mutable_nvtx_ranges()->add_thread_ref(1); },
       "nvtx_ranges.thread_ref"},
      {"nvtx range depth", [](auto* b) { b->mutable_nvtx_ranges()->add_depth(1); },
       "nvtx_ranges.depth"},
      {"nvtx mark domain", [](auto* b) { b->mutable_nvtx_marks()->add_domain_ref(0); },
       "nvtx_marks.domain_ref"},
      {"nvtx mark message", [](auto* b) { b->mutable_nvtx_marks()->add_message_ref(0); },
       "nvtx_marks.message_ref"},
      {"nvtx mark thread",
       [](auto* b) { b->mutable_nvtx_marks()->mutable_thread_ref()->RemoveLast(); },
       "nvtx_marks.thread_ref"},
      {"overhead duration", [](auto* b) { b->mutable_overheads()->add_duration_ns(1); },
       "overheads.duration_ns"},
      {"overhead kind", [](auto* b) { b->mutable_overheads()->add_kind_ref(1); },
       "overheads.kind_ref"},
      {"overhead thread", [](auto* b) { b->mutable_overheads()->add_thread_ref(1); },
       "overheads.thread_ref"},
      {"collective op", [](auto* b) { b->mutable_collectives()->add_op_ref(1); },
       "collectives.op_ref"},
      {"collective dtype",
       [](auto* b) { b->mutable_collectives()->mutable_dtype_ref()->RemoveLast(); },
       "collectives.dtype_ref"},
      {"collective group", [](auto* b) { b->mutable_collectives()->add_group_ref(0); },
       "collectives.group_ref"},
      {"collective in bytes",
       [](auto* b) { b->mutable_collectives()->mutable_in_bytes()->RemoveLast(); },
       "collectives.in_bytes"},
      {"collective out bytes", [](auto* b) { b->mutable_collectives()->add_out_bytes(1); },
       "collectives.out_bytes"},
      {"collective group size", [](auto* b) { b->mutable_collectives()->add_group_size(2); },
       "collectives.group_size"},
      {"collective sequence", // sequence is required too: -1, not absence, says "unknown"
       [](auto* b) { b->mutable_collectives()->clear_sequence(); }, "collectives.sequence"},
      {"collective correlations short",
       [](auto* b) { b->mutable_collectives()->mutable_correlation_delta()->RemoveLast(); },
       "collectives.op_ref"},
  };
  for (const Corruption& c : cases) ExpectRejected(c);
}

TEST(BatchDecoderValidation, UndefinedRefsAreRejected) {
  constexpr uint32_t kUndefined = 999;
  const std::vector<Corruption> cases = {
      {"signature", [](auto* b) { b->mutable_kernels()->set_signature_ref(1, kUndefined); },
       "kernels.signature_ref[1]"},
      {"kernel stream", [](auto* b) { b->mutable_kernels()->set_stream_ref(0, kUndefined); },
       "kernels.stream_ref[0]"},
      {"kernel stream 0", [](auto* b) { b->mutable_kernels()->set_stream_ref(0, 0); },
       "kernels.stream_ref[0]"},
      {"memcpy stream", [](auto* b) { b->mutable_memcpys()->set_stream_ref(1, kUndefined); },
       "memcpys.stream_ref[1]"},
      {"memset stream", [](auto* b) { b->mutable_memsets()->set_stream_ref(0, kUndefined); },
       "memsets.stream_ref[0]"},
      {"sync stream", [](auto* b) { b->mutable_syncs()->set_stream_ref(1, kUndefined); },
       "syncs.stream_ref[1]"},
      {"memory stream", [](auto* b) { b->mutable_memory()->set_stream_ref(0, kUndefined); },
       "memory.stream_ref[0]"},
      {"api", [](auto* b) { b->mutable_apis()->set_api_ref(1, kUndefined); }, "apis.api_ref[1]"},
      {"api 0", [](auto* b) { b->mutable_apis()->set_api_ref(0, 0); }, "apis.api_ref[0]"},
      {"api thread", [](auto* b) { b->mutable_apis()->set_thread_ref(0, kUndefined); },
       "apis.thread_ref[0]"},
      {"api call site", [](auto* b) { b->mutable_apis()->set_call_site_ref(1, kUndefined); },
       "apis.call_site_ref[1]"},
      {"nvtx range domain",
       [](auto* b) { b->mutable_nvtx_ranges()->set_domain_ref(0, kUndefined); },
       "nvtx_ranges.domain_ref[0]"},
      {"nvtx range message",
       [](auto* b) { b->mutable_nvtx_ranges()->set_message_ref(1, kUndefined); },
       "nvtx_ranges.message_ref[1]"},
      {"nvtx range thread",
       [](auto* b) { b->mutable_nvtx_ranges()->set_thread_ref(1, kUndefined); },
       "nvtx_ranges.thread_ref[1]"},
      {"nvtx mark domain",
       [](auto* b) { b->mutable_nvtx_marks()->set_domain_ref(0, kUndefined); },
       "nvtx_marks.domain_ref[0]"},
      {"nvtx mark message",
       [](auto* b) { b->mutable_nvtx_marks()->set_message_ref(1, kUndefined); },
       "nvtx_marks.message_ref[1]"},
      {"nvtx mark thread",
       [](auto* b) { b->mutable_nvtx_marks()->set_thread_ref(0, kUndefined); },
       "nvtx_marks.thread_ref[0]"},
      {"overhead kind", [](auto* b) { b->mutable_overheads()->set_kind_ref(1, kUndefined); },
       "overheads.kind_ref[1]"},
      {"overhead thread", [](auto* b) { b->mutable_overheads()->set_thread_ref(0, kUndefined); },
       "overheads.thread_ref[0]"},
      {"collective op", [](auto* b) { b->mutable_collectives()->set_op_ref(1, kUndefined); },
       "collectives.op_ref[1]"},
      {"collective dtype",
       [](auto* b) { b->mutable_collectives()->set_dtype_ref(0, kUndefined); },
       "collectives.dtype_ref[0]"},
      {"collective group",
       [](auto* b) { b->mutable_collectives()->set_group_ref(1, kUndefined); },
       "collectives.group_ref[1]"},
  };
  for (const Corruption& c : cases) ExpectRejected(c);
}

TEST(BatchDecoderValidation, OutOfRangeEnumValuesAreRejected) {
  const std::vector<Corruption> cases = {
      {"copy kind 6", [](auto* b) { b->mutable_memcpys()->set_packed_kinds(0, 6); },
       "memcpys.packed_kinds[0]"},
      {"copy kind 7", [](auto* b) { b->mutable_memcpys()->set_packed_kinds(1, 7); },
       "memcpys.packed_kinds[1]"},
      {"copy src kind 6", [](auto* b) { b->mutable_memcpys()->set_packed_kinds(0, 1 | 6 << 3); },
       "memcpys.packed_kinds[0]"},
      {"copy dst kind 7", [](auto* b) { b->mutable_memcpys()->set_packed_kinds(0, 1 | 7 << 6); },
       "memcpys.packed_kinds[0]"},
      {"copy stray high bit", [](auto* b) { b->mutable_memcpys()->set_packed_kinds(0, 1 << 10); },
       "memcpys.packed_kinds[0]"},
      {"memset kind 6", [](auto* b) { b->mutable_memsets()->set_packed_kinds(1, 6); },
       "memsets.packed_kinds[1]"},
      {"memset stray bit", [](auto* b) { b->mutable_memsets()->set_packed_kinds(0, 1 << 4); },
       "memsets.packed_kinds[0]"},
      {"memory op 3", [](auto* b) { b->mutable_memory()->set_packed_kinds(0, 3); },
       "memory.packed_kinds[0]"},
      {"memory kind 6", [](auto* b) { b->mutable_memory()->set_packed_kinds(1, 1 | 6 << 2); },
       "memory.packed_kinds[1]"},
      {"memory stray bit", [](auto* b) { b->mutable_memory()->set_packed_kinds(0, 1 << 6); },
       "memory.packed_kinds[0]"},
      {"sync kind 5", [](auto* b) { b->mutable_syncs()->set_sync_kind(1, 5); },
       "syncs.sync_kind[1]"},
      {"sync kind huge", [](auto* b) { b->mutable_syncs()->set_sync_kind(0, 0xFFFFFFFF); },
       "syncs.sync_kind[0]"},
  };
  for (const Corruption& c : cases) ExpectRejected(c);
}

TEST(BatchDecoderValidation, LargestValidEnumValuesAreAccepted) {
  ValidBatch v;
  v.batch.mutable_memcpys()->set_packed_kinds(0, 5 | 5 << 3 | 5 << 6 | 1 << 9);
  v.batch.mutable_memsets()->set_packed_kinds(0, 5 | 1 << 3);
  v.batch.mutable_memory()->set_packed_kinds(0, 2 | 5 << 2 | 1 << 5);
  v.batch.mutable_syncs()->set_sync_kind(0, 4);
  EventColumns out;
  const absl::Status st = DecodeBatch(v.batch, v.dict, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out.memcpys[0].copy_kind, CopyKind::kPtoP);
  EXPECT_EQ(out.memcpys[0].src_kind, MemoryKind::kArray);
  EXPECT_EQ(out.memcpys[0].dst_kind, MemoryKind::kArray);
  EXPECT_TRUE(out.memcpys[0].async);
  EXPECT_EQ(out.memsets[0].memory_kind, MemoryKind::kArray);
  EXPECT_TRUE(out.memsets[0].async);
  EXPECT_EQ(out.memory[0].op, MemoryOpKind::kFree);
  EXPECT_EQ(out.memory[0].memory_kind, MemoryKind::kArray);
  EXPECT_TRUE(out.memory[0].from_pool);
  EXPECT_EQ(out.syncs[0].sync_kind, SyncKind::kContext);
}

TEST(BatchDecoderValidation, ErrorInALaterKindLeavesOutputUntouched) {
  // Kernels decode fine, overheads (the last kind decoded) fail: nothing may be appended.
  ExpectRejected({"last kind", [](auto* b) { b->mutable_overheads()->set_thread_ref(1, 55); },
                  "overheads.thread_ref[1]"});
  // Collectives are decoded last of all.
  ExpectRejected({"collectives", [](auto* b) { b->mutable_collectives()->set_group_ref(0, 55); },
                  "collectives.group_ref[0]"});
}

// ---------------------------------------------------------------------------------------------
// Dictionary definitions.

absl::Status ApplyOne(ProcessDictionary* dict,
                      const std::function<void(v1::Dictionary*)>& fill) {
  v1::Dictionary d;
  fill(&d);
  return dict->Apply(d);
}

void ExpectDictRejected(const std::function<void(v1::Dictionary*)>& fill, const char* words) {
  ProcessDictionary dict;
  ASSERT_TRUE(ApplyOne(&dict, [](v1::Dictionary* d) {
                auto* s = d->add_strings();
                s->set_ref(1);
                s->set_value("cudaLaunchKernel");
                auto* sig = d->add_kernel_signatures();
                sig->set_ref(1);
                sig->set_name_ref(1);
                sig->set_grid_x(4);
                auto* st = d->add_streams();
                st->set_ref(1);
                st->set_stream_id(7);
                auto* th = d->add_threads();
                th->set_ref(1);
                th->set_os_thread_id(77);
                auto* api = d->add_apis();
                api->set_ref(1);
                api->set_domain(v1::API_DOMAIN_RUNTIME);
                api->set_cbid(211);
                api->set_name_ref(1);
              }).ok());
  const size_t before = dict.definition_count();
  const absl::Status st = ApplyOne(&dict, fill);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr(words));
  EXPECT_EQ(dict.definition_count(), before);
  // Earlier definitions keep their values.
  EXPECT_EQ(dict.strings().Get(1), "cudaLaunchKernel");
  ASSERT_NE(dict.stream(1), nullptr);
  EXPECT_EQ(dict.stream(1)->stream_id, 7u);
  ASSERT_NE(dict.thread(1), nullptr);
  EXPECT_EQ(*dict.thread(1), 77u);
  ASSERT_NE(dict.api(1), nullptr);
  EXPECT_EQ(dict.api(1)->cbid, 211u);
  ASSERT_NE(dict.signature(1), nullptr);
  EXPECT_EQ(dict.signature(1)->shape.grid_x, 4u);
}

TEST(ProcessDictionaryValidation, RedefinitionWithADifferentValueIsRejected) {
  ExpectDictRejected([](v1::Dictionary* d) {
    auto* s = d->add_strings();
    s->set_ref(1);
    s->set_value("cudaMemcpyAsync");
  }, "string ref 1");
  ExpectDictRejected([](v1::Dictionary* d) {
    auto* s = d->add_kernel_signatures();
    s->set_ref(1);
    s->set_name_ref(1);
    s->set_grid_x(5);
  }, "kernel signature ref 1");
  ExpectDictRejected([](v1::Dictionary* d) {
    auto* s = d->add_streams();
    s->set_ref(1);
    s->set_stream_id(8);
  }, "stream ref 1");
  ExpectDictRejected([](v1::Dictionary* d) {
    auto* s = d->add_threads();
    s->set_ref(1);
    s->set_os_thread_id(78);
  }, "thread ref 1");
  ExpectDictRejected([](v1::Dictionary* d) {
    auto* s = d->add_apis();
    s->set_ref(1);
    s->set_domain(v1::API_DOMAIN_DRIVER);
    s->set_cbid(211);
    s->set_name_ref(1);
  }, "api ref 1");
}

TEST(ProcessDictionaryValidation, IdenticalRedefinitionIsAccepted) {
  ProcessDictionary dict;
  auto fill = [](v1::Dictionary* d) {
    auto* s = d->add_strings();
    s->set_ref(3);
    s->set_value("x");
    auto* st = d->add_streams();
    st->set_ref(2);
    st->set_device_id(1);
    auto* api = d->add_apis();
    api->set_ref(4);
    api->set_name_ref(3);
    api->set_domain(v1::API_DOMAIN_DRIVER);
  };
  ASSERT_TRUE(ApplyOne(&dict, fill).ok());
  EXPECT_TRUE(ApplyOne(&dict, fill).ok());
  EXPECT_EQ(dict.definition_count(), 3u);
}

TEST(ProcessDictionaryValidation, RefZeroDefinitionsAreRejected) {
  ExpectDictRejected([](v1::Dictionary* d) { d->add_strings()->set_value("zero"); },
                     "string ref 0");
  ExpectDictRejected([](v1::Dictionary* d) { d->add_kernel_signatures()->set_name_ref(1); },
                     "kernel signature ref 0");
  ExpectDictRejected([](v1::Dictionary* d) { d->add_streams()->set_stream_id(1); },
                     "stream ref 0");
  ExpectDictRejected([](v1::Dictionary* d) { d->add_threads()->set_os_thread_id(5); },
                     "thread ref 0");
  ExpectDictRejected([](v1::Dictionary* d) { d->add_apis()->set_name_ref(1); }, "api ref 0");
}

TEST(ProcessDictionaryValidation, DefinitionsNamingUnknownStringsAreRejected) {
  ExpectDictRejected([](v1::Dictionary* d) {
    auto* a = d->add_apis();
    a->set_ref(2);
    a->set_name_ref(42);
  }, "api names unknown string ref 42");
  ExpectDictRejected([](v1::Dictionary* d) {
    auto* s = d->add_kernel_signatures();
    s->set_ref(2);
    s->set_name_ref(43);
  }, "kernel signature names unknown string ref 43");
  ExpectDictRejected([](v1::Dictionary* d) {
    auto* t = d->add_threads();
    t->set_ref(2);
    t->set_os_thread_id(9);
    t->set_name_ref(44);
  }, "thread names unknown string ref 44");
}

TEST(ProcessDictionaryValidation, ApiWithOutOfRangeDomainIsRejected) {
  ExpectDictRejected([](v1::Dictionary* d) {
    auto* a = d->add_apis();
    a->set_ref(2);
    a->set_name_ref(1);
    a->set_domain(static_cast<v1::ApiDomain>(3));
  }, "api ref 2 has bad domain");
}

TEST(ProcessDictionaryValidation, StringsDefinedInTheSameBatchMayBeNamed) {
  ProcessDictionary dict;
  ASSERT_TRUE(ApplyOne(&dict, [](v1::Dictionary* d) {
                auto* a = d->add_apis();  // listed before the string, defined in the same batch
                a->set_ref(1);
                a->set_name_ref(9);
                auto* t = d->add_threads();
                t->set_ref(1);
                t->set_name_ref(9);
                auto* s = d->add_strings();
                s->set_ref(9);
                s->set_value("cuLaunchKernelEx");
              }).ok());
  ASSERT_NE(dict.api(1), nullptr);
  EXPECT_EQ(dict.strings().Get(dict.api(1)->name), "cuLaunchKernelEx");
}

// ---------------------------------------------------------------------------------------------
// Fuzz: arbitrary bytes must never crash the parser + dictionary + decoder (run under ASan/UBSan).

// Structural mutation through reflection: one random edit of one random column or definition
// field (append, drop, or overwrite with an arbitrary value), so that most inputs parse and reach
// the decoder's checks deep inside a column rather than the parser's.
void MutateField(google::protobuf::Message* msg, std::mt19937_64& rng, int depth = 0) {
  using google::protobuf::FieldDescriptor;
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  const auto* desc = msg->GetDescriptor();
  const auto* refl = msg->GetReflection();
  const FieldDescriptor* f = desc->field(static_cast<int>(pick(desc->field_count())));
  const uint64_t value = pick(4) == 0 ? rng() : pick(8);
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    if (depth > 2) return;
    if (!f->is_repeated()) return MutateField(refl->MutableMessage(msg, f), rng, depth + 1);
    const int n = refl->FieldSize(*msg, f);
    google::protobuf::Message* sub =
        n == 0 || pick(3) == 0 ? refl->AddMessage(msg, f)
                               : refl->MutableRepeatedMessage(msg, f, static_cast<int>(pick(n)));
    return MutateField(sub, rng, depth + 1);
  }
  if (f->is_repeated()) {
    const int n = refl->FieldSize(*msg, f);
    const size_t op = pick(3);
    if (op == 0 && n > 0) return refl->RemoveLast(msg, f);
    const int i = static_cast<int>(op == 1 || n == 0 ? -1 : static_cast<int>(pick(n)));
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT64:
        i < 0 ? refl->AddInt64(msg, f, static_cast<int64_t>(value))
              : refl->SetRepeatedInt64(msg, f, i, static_cast<int64_t>(value));
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        i < 0 ? refl->AddUInt64(msg, f, value) : refl->SetRepeatedUInt64(msg, f, i, value);
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        i < 0 ? refl->AddUInt32(msg, f, static_cast<uint32_t>(value))
              : refl->SetRepeatedUInt32(msg, f, i, static_cast<uint32_t>(value));
        break;
      default:
        break;
    }
    return;
  }
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT64: refl->SetInt64(msg, f, static_cast<int64_t>(value)); break;
    case FieldDescriptor::CPPTYPE_UINT64: refl->SetUInt64(msg, f, value); break;
    case FieldDescriptor::CPPTYPE_UINT32:
      refl->SetUInt32(msg, f, static_cast<uint32_t>(value));
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      refl->SetEnumValue(msg, f, static_cast<int>(static_cast<int32_t>(value)));
      break;
    case FieldDescriptor::CPPTYPE_STRING: refl->SetString(msg, f, std::to_string(value)); break;
    default: break;
  }
}

// Parses `bytes` and pushes the result through both a fresh dictionary and one that already holds
// the valid batch's definitions. Returns whether the batch decoded against the fresh one.
struct FuzzCounts {
  int parsed = 0;
  int decoded = 0;
  int rejected = 0;
};

void DecodeUntrusted(const std::string& bytes, const ProcessDictionary& known_base,
                     FuzzCounts* counts) {
  v1::EventBatch batch;
  if (!batch.ParseFromString(bytes)) return;
  ++counts->parsed;
  ProcessDictionary fresh;
  (void)fresh.Apply(batch.dictionary());
  EventColumns out;
  (void)DecodeBatch(batch, fresh, &out);
  ProcessDictionary known = known_base;
  (void)known.Apply(batch.dictionary());
  EventColumns out2 = Sentinel();
  if (DecodeBatch(batch, known, &out2).ok()) {
    ++counts->decoded;
    EXPECT_EQ(out2.size(), Sentinel().size() + CountEvents(batch));
  } else {
    ++counts->rejected;
    EXPECT_EQ(out2, Sentinel());
  }
}

TEST(BatchDecoderFuzz, MutatedSerializedBatchesNeverCrash) {
  google::protobuf::LogSilencer quiet;  // invalid UTF-8 in mutated strings is logged otherwise
  ValidBatch v;
  std::string seed_bytes;
  ASSERT_TRUE(v.batch.SerializeToString(&seed_bytes));
  std::mt19937_64 rng(0xF022);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  FuzzCounts bytes_counts, struct_counts;
  for (int iter = 0; iter < 2000; ++iter) {
    // Raw byte mutations: flips, overwrites, inserts, deletions, truncation.
    std::string bytes = seed_bytes;
    const int edits = 1 + static_cast<int>(pick(3));
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      switch (pick(5)) {
        case 0: bytes[pick(bytes.size())] ^= static_cast<char>(1u << pick(8)); break;
        case 1: bytes[pick(bytes.size())] = static_cast<char>(pick(256)); break;
        case 2: bytes.insert(pick(bytes.size() + 1), 1, static_cast<char>(pick(256))); break;
        case 3: bytes.erase(pick(bytes.size()), 1 + pick(4)); break;
        case 4: bytes.resize(pick(bytes.size() + 1)); break;
      }
    }
    DecodeUntrusted(bytes, v.dict, &bytes_counts);

    // Structural mutations that survive parsing.
    v1::EventBatch mutated = v.batch;
    for (int e = 0, n = 1 + static_cast<int>(pick(3)); e < n; ++e) MutateField(&mutated, rng);
    std::string structured;
    ASSERT_TRUE(mutated.SerializeToString(&structured));
    DecodeUntrusted(structured, v.dict, &struct_counts);
  }
  // Both the accept and the reject paths of the decoder are actually reached.
  EXPECT_GT(bytes_counts.parsed, 50);
  EXPECT_GT(struct_counts.parsed, 1900);
  EXPECT_GT(struct_counts.decoded, 100);
  EXPECT_GT(struct_counts.rejected, 100);
  RecordProperty("byte_mutations_parsed", bytes_counts.parsed);
  RecordProperty("structural_decoded", struct_counts.decoded);
  RecordProperty("structural_rejected", struct_counts.rejected);
}

}  // namespace
}  // namespace gpuspy
