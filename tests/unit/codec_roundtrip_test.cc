// Round trips through the wire codec: model events -> BatchEncoder -> serialized EventBatch ->
// ProcessDictionary + DecodeBatch -> model events, and model events <-> expanded v1::Event.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/batch_decoder.h"
#include "codec/batch_encoder.h"
#include "codec/expanded_events.h"
#include "codec/process_dictionary.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy {
namespace {

// ---------------------------------------------------------------------------------------------
// Deterministic random events covering every kind and every field.

struct BatchShape {
  bool graphs = true;      // some kernels carry a graph id
  bool peer_copies = true; // some copies have src/dst devices other than the stream's
  bool call_sites = true;  // some API calls carry a call site
};

class EventGen {
 public:
  EventGen(uint64_t seed, StringTable* strings) : rng_(seed), strings_(strings) {}

  EventColumns Make(size_t per_kind, const BatchShape& shape) {
    EventColumns ev;
    for (size_t i = 0; i < per_kind; ++i) {
      ev.kernels.push_back(Kernel(shape.graphs));
      ev.memcpys.push_back(Memcpy(shape.peer_copies));
      ev.memsets.push_back(Memset());
      ev.syncs.push_back(Sync());
      ev.memory.push_back(Memory());
      ev.apis.push_back(Api(shape.call_sites));
      ev.nvtx_ranges.push_back(NvtxRange());
      ev.nvtx_marks.push_back(NvtxMark());
      ev.overheads.push_back(Overhead());
    }
    return ev;
  }

  // A timestamp that mostly advances but sometimes jumps back (out-of-order starts).
  int64_t Time() {
    now_ += Uniform(0, 20'000);
    if (Uniform(0, 9) == 0) return now_ - Uniform(1, 5'000'000);
    return now_;
  }
  // Correlation ids mostly increase but sometimes decrease (kinds arrive in separate buffers).
  uint64_t Correlation() {
    corr_ += static_cast<uint64_t>(Uniform(1, 3));
    if (Uniform(0, 7) == 0) return corr_ - static_cast<uint64_t>(Uniform(1, 1000));
    return corr_;
  }
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  uint32_t U32(uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng_);
  }
  StringRef Name(const char* prefix, int variants) {
    return strings_->Intern(std::string(prefix) + std::to_string(Uniform(0, variants - 1)));
  }
  StreamKey Stream() { return {U32(0, 3), U32(1, 2), U32(7, 12)}; }
  uint32_t Thread() { return U32(1000, 1003); }

  KernelEvent Kernel(bool graphs) {
    KernelEvent e;
    e.start_ns = Time();
    e.end_ns = e.start_ns + Uniform(1'000, 2'000'000);
    e.correlation_id = Correlation();
    e.name = Name("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_", 6);
    e.stream = Stream();
    e.shape = LaunchShape{U32(1, 4096), U32(1, 8), U32(1, 2), U32(32, 1024), U32(1, 4), 1,
                          U32(16, 255), U32(0, 49152), U32(0, 100000)};
    e.graph_id = graphs && Uniform(0, 2) == 0 ? U32(1, 50) : 0;
    return e;
  }
  MemcpyEvent Memcpy(bool peer) {
    MemcpyEvent e;
    e.start_ns = Time();
    e.end_ns = e.start_ns + Uniform(500, 900'000);
    e.correlation_id = Correlation();
    e.stream = Stream();
    e.copy_kind = static_cast<CopyKind>(U32(0, 5));
    e.src_kind = static_cast<MemoryKind>(U32(0, 5));
    e.dst_kind = static_cast<MemoryKind>(U32(0, 5));
    e.async = Uniform(0, 1) == 1;
    e.bytes = static_cast<uint64_t>(Uniform(1, int64_t{1} << 34));
    e.src_device_id = e.stream.device_id;
    e.dst_device_id = e.stream.device_id;
    if (peer && Uniform(0, 2) == 0) {
      e.copy_kind = CopyKind::kPtoP;
      e.src_device_id = U32(0, 7);
      e.dst_device_id = U32(0, 7);
    }
    return e;
  }
  MemsetEvent Memset() {
    MemsetEvent e;
    e.start_ns = Time();
    e.end_ns = e.start_ns + Uniform(100, 50'000);
    e.correlation_id = Correlation();
    e.stream = Stream();
    e.memory_kind = static_cast<MemoryKind>(U32(0, 5));
    e.async = Uniform(0, 1) == 1;
    e.bytes = static_cast<uint64_t>(Uniform(1, int64_t{1} << 30));
    e.value = U32(0, 255);
    return e;
  }
  SyncEvent Sync() {
    SyncEvent e;
    e.start_ns = Time();
    e.end_ns = e.start_ns + Uniform(0, 3'000'000);
    e.correlation_id = Correlation();
    e.stream = Stream();
    e.sync_kind = static_cast<SyncKind>(U32(0, 4));
    return e;
  }
  MemoryEvent Memory() {
    MemoryEvent e;
    e.timestamp_ns = Time();
    e.correlation_id = Correlation();
    e.stream = Stream();
    e.op = static_cast<MemoryOpKind>(U32(0, 2));
    e.memory_kind = static_cast<MemoryKind>(U32(0, 5));
    e.from_pool = Uniform(0, 1) == 1;
    // Addresses jump up and down: negative address deltas.
    e.address = 0x7f0000000000ULL + static_cast<uint64_t>(Uniform(0, int64_t{1} << 36)) * 256;
    e.bytes = static_cast<uint64_t>(Uniform(256, int64_t{1} << 32));
    return e;
  }
  ApiEvent Api(bool call_sites) {
    ApiEvent e;
    e.start_ns = Time();
    e.end_ns = e.start_ns + Uniform(200, 40'000);
    e.correlation_id = Correlation();
    e.domain = static_cast<ApiDomain>(U32(0, 2));
    e.cbid = U32(1, 400);
    e.name = Name("cudaApi", 8);
    e.thread_id = Thread();
    e.call_site = call_sites && Uniform(0, 1) == 0 ? Name("model.py:", 20) : 0;
    return e;
  }
  NvtxRangeEvent NvtxRange() {
    NvtxRangeEvent e;
    e.start_ns = Time();
    e.end_ns = e.start_ns + Uniform(0, 90'000'000);
    e.domain = Uniform(0, 1) == 0 ? 0 : Name("domain", 2);
    e.message = Name("ProfilerStep#", 50);
    e.thread_id = Thread();
    e.depth = U32(0, 5);
    return e;
  }
  NvtxMarkEvent NvtxMark() {
    NvtxMarkEvent e;
    e.timestamp_ns = Time();
    e.domain = Name("domain", 2);
    e.message = Uniform(0, 1) == 0 ? 0 : Name("mark", 5);
    e.thread_id = Thread();
    return e;
  }
  OverheadEvent Overhead() {
    OverheadEvent e;
    e.start_ns = Time();
    e.end_ns = e.start_ns + Uniform(10, 100'000);
    e.kind = Name("overhead:", 3);
    e.thread_id = Thread();
    return e;
  }

 private:
  std::mt19937_64 rng_;
  StringTable* strings_;
  int64_t now_ = 1'700'000'000'000'000'000;
  uint64_t corr_ = 5'000;
};

v1::EventBatch Reparse(const v1::EventBatch& batch) {
  std::string bytes;
  EXPECT_TRUE(batch.SerializeToString(&bytes));
  v1::EventBatch parsed;
  EXPECT_TRUE(parsed.ParseFromString(bytes));
  return parsed;
}

std::set<uint32_t> StringRefsOf(const v1::Dictionary& d) {
  std::set<uint32_t> refs;
  for (const auto& s : d.strings()) refs.insert(s.ref());
  return refs;
}

// ---------------------------------------------------------------------------------------------

TEST(CodecRoundTrip, EveryKindAndFieldSurvivesSeveralBatchesThroughOneDictionary) {
  StringTable producer;
  EventGen gen(0xC0DEC, &producer);
  BatchEncoder encoder(&producer);
  ProcessDictionary dict;
  EventColumns expected, decoded;

  // Batches alternate which optional columns they need, so both the "column present" and the
  // "column omitted, default implied" paths are decoded.
  const BatchShape shapes[] = {{true, true, true},
                               {false, false, false},
                               {true, false, true},
                               {false, true, false},
                               {true, true, true}};
  uint64_t sequence = 1;
  for (const BatchShape& shape : shapes) {
    const EventColumns input = gen.Make(60, shape);
    expected.Append(input);
    v1::EventBatch batch;
    encoder.Encode(input, sequence++, LossCounters{}, &batch);
    const v1::EventBatch wire = Reparse(batch);
    ASSERT_EQ(CountEvents(wire), input.size());
    ASSERT_TRUE(dict.Apply(wire.dictionary()).ok());
    const absl::Status st = DecodeBatch(wire, dict, &decoded);
    ASSERT_TRUE(st.ok()) << st;
  }
  ASSERT_EQ(decoded.size(), expected.size());
  EXPECT_EQ(decoded.kernels, expected.kernels);
  EXPECT_EQ(decoded.memcpys, expected.memcpys);
  EXPECT_EQ(decoded.memsets, expected.memsets);
  EXPECT_EQ(decoded.syncs, expected.syncs);
  EXPECT_EQ(decoded.memory, expected.memory);
  EXPECT_EQ(decoded.apis, expected.apis);
  EXPECT_EQ(decoded.nvtx_ranges, expected.nvtx_ranges);
  EXPECT_EQ(decoded.nvtx_marks, expected.nvtx_marks);
  EXPECT_EQ(decoded.overheads, expected.overheads);
  EXPECT_TRUE(decoded == expected);
  // Strings resolve to the producer's values.
  producer.ForEach([&](StringRef ref, std::string_view value) {
    EXPECT_EQ(dict.strings().Get(ref), value) << "ref " << ref;
  });
}

TEST(CodecRoundTrip, InputActuallyExercisesNegativeDeltasAndOptionalColumns) {
  // Guards the round-trip test against a generator that silently stops producing the hard cases.
  StringTable producer;
  EventGen gen(0xC0DEC, &producer);
  const EventColumns input = gen.Make(60, BatchShape{});
  BatchEncoder encoder(&producer);
  v1::EventBatch batch;
  encoder.Encode(input, 1, LossCounters{}, &batch);
  auto any_negative = [](const auto& column) {
    return std::any_of(column.begin(), column.end(), [](int64_t d) { return d < 0; });
  };
  EXPECT_TRUE(any_negative(batch.kernels().start_delta_ns()));
  EXPECT_TRUE(any_negative(batch.kernels().correlation_delta()));
  EXPECT_TRUE(any_negative(batch.memory().address_delta()));
  EXPECT_TRUE(any_negative(batch.apis().start_delta_ns()));
  EXPECT_EQ(batch.kernels().graph_id_size(), 60);
  EXPECT_EQ(batch.memcpys().src_device_id_size(), 60);
  EXPECT_EQ(batch.memcpys().dst_device_id_size(), 60);
  EXPECT_EQ(batch.apis().call_site_ref_size(), 60);

  v1::EventBatch plain;
  encoder.Encode(gen.Make(10, BatchShape{false, false, false}), 2, LossCounters{}, &plain);
  EXPECT_EQ(plain.kernels().graph_id_size(), 0);
  EXPECT_EQ(plain.memcpys().src_device_id_size(), 0);
  EXPECT_EQ(plain.memcpys().dst_device_id_size(), 0);
  EXPECT_EQ(plain.apis().call_site_ref_size(), 0);
}

TEST(CodecRoundTrip, ExtremeValuesWrapExactly) {
  StringTable producer;
  const StringRef name = producer.Intern("k");
  const StringRef api = producer.Intern("cuLaunchKernel");
  EventColumns input;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr uint64_t kUMax = std::numeric_limits<uint64_t>::max();
  input.kernels.push_back({kMin, kMax, kUMax, name, {1, 2, 3}, {}, 0xFFFFFFFF});
  input.kernels.push_back({kMax, kMin, 0, name, {1, 2, 3}, {}, 0});  // end before start
  input.kernels.push_back({0, 0, kUMax / 2 + 1, name, {1, 2, 3}, {}, 1});
  input.memory.push_back({kMax, kUMax, {0, 0, 0}, MemoryOpKind::kAlloc, MemoryKind::kDevice,
                          true, kUMax, kUMax});
  input.memory.push_back({kMin, 0, {0, 0, 0}, MemoryOpKind::kFree, MemoryKind::kManaged, false,
                          0, 0});
  input.apis.push_back({kMin, kMin + 1, 1, ApiDomain::kDriver, 0xFFFFFFFF, api, 0xFFFFFFFF, 0});
  input.memcpys.push_back({-5, -1, 3, {0xFFFFFFFF, 0, 0}, CopyKind::kPtoP, MemoryKind::kArray,
                           MemoryKind::kArray, true, kUMax, 0, 0xFFFFFFFF});

  BatchEncoder encoder(&producer);
  v1::EventBatch batch;
  encoder.Encode(input, 1, LossCounters{}, &batch);
  const v1::EventBatch wire = Reparse(batch);
  ProcessDictionary dict;
  ASSERT_TRUE(dict.Apply(wire.dictionary()).ok());
  EventColumns decoded;
  const absl::Status st = DecodeBatch(wire, dict, &decoded);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(decoded, input);
}

TEST(CodecRoundTrip, DecodeAppendsToExistingEvents) {
  StringTable producer;
  EventGen gen(7, &producer);
  const EventColumns first = gen.Make(3, BatchShape{});
  EventColumns out = first;
  const EventColumns input = gen.Make(4, BatchShape{});
  BatchEncoder encoder(&producer);
  v1::EventBatch batch;
  encoder.Encode(input, 1, LossCounters{}, &batch);
  ProcessDictionary dict;
  ASSERT_TRUE(dict.Apply(batch.dictionary()).ok());
  ASSERT_TRUE(DecodeBatch(batch, dict, &out).ok());
  EventColumns expected = first;
  expected.Append(input);
  EXPECT_EQ(out, expected);
}

TEST(CodecRoundTrip, EmptyBatchCarriesSequenceLossAndNoEvents) {
  StringTable producer;
  BatchEncoder encoder(&producer);
  v1::EventBatch batch;
  encoder.Encode(EventColumns{}, 42, LossCounters{1, 2, 3}, &batch);
  EXPECT_EQ(batch.sequence(), 42u);
  EXPECT_EQ(CountEvents(batch), 0u);
  EXPECT_FALSE(batch.has_dictionary());
  EXPECT_EQ(batch.loss().cupti_dropped_records(), 1u);
  EXPECT_EQ(batch.loss().queue_dropped_events(), 2u);
  EXPECT_EQ(batch.loss().spill_dropped_events(), 3u);
  ProcessDictionary dict;
  EventColumns out;
  EXPECT_TRUE(DecodeBatch(batch, dict, &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(CodecDefinitions, EachDefinitionIsSentOnlyOnce) {
  StringTable producer;
  EventGen gen(11, &producer);
  BatchEncoder encoder(&producer);

  std::set<uint32_t> strings, signatures, streams, threads, apis;
  auto check_new = [](std::set<uint32_t>& seen, uint32_t ref, const char* table) {
    EXPECT_TRUE(seen.insert(ref).second) << table << " ref " << ref << " sent twice";
  };
  for (uint64_t seq = 1; seq <= 4; ++seq) {
    v1::EventBatch batch;
    encoder.Encode(gen.Make(25, BatchShape{}), seq, LossCounters{}, &batch);
    const v1::Dictionary& d = batch.dictionary();
    if (seq == 1) {
      EXPECT_GT(d.strings_size(), 0);
      EXPECT_GT(d.kernel_signatures_size(), 0);
      EXPECT_GT(d.streams_size(), 0);
      EXPECT_GT(d.threads_size(), 0);
      EXPECT_GT(d.apis_size(), 0);
    }
    for (const auto& s : d.strings()) check_new(strings, s.ref(), "string");
    for (const auto& s : d.kernel_signatures()) check_new(signatures, s.ref(), "signature");
    for (const auto& s : d.streams()) check_new(streams, s.ref(), "stream");
    for (const auto& s : d.threads()) check_new(threads, s.ref(), "thread");
    for (const auto& s : d.apis()) check_new(apis, s.ref(), "api");
  }
  EXPECT_EQ(strings.size(), producer.size());
}

TEST(CodecDefinitions, SecondBatchWithKnownValuesCarriesNoDictionary) {
  StringTable producer;
  const StringRef name = producer.Intern("ampere_sgemm_128x64_tn");
  const StringRef api = producer.Intern("cudaLaunchKernel");
  EventColumns ev;
  ev.kernels.push_back({100, 200, 1, name, {0, 1, 7}, {}, 0});
  ev.apis.push_back({90, 95, 1, ApiDomain::kRuntime, 211, api, 4242, 0});

  BatchEncoder encoder(&producer);
  v1::EventBatch first, second;
  encoder.Encode(ev, 1, LossCounters{}, &first);
  ASSERT_TRUE(first.has_dictionary());
  EXPECT_EQ(first.dictionary().strings_size(), 2);
  EXPECT_EQ(first.dictionary().kernel_signatures_size(), 1);
  EXPECT_EQ(first.dictionary().streams_size(), 1);
  EXPECT_EQ(first.dictionary().threads_size(), 1);
  EXPECT_EQ(first.dictionary().apis_size(), 1);

  encoder.Encode(ev, 2, LossCounters{}, &second);
  EXPECT_FALSE(second.has_dictionary());
  EXPECT_EQ(second.dictionary().ByteSizeLong(), 0u);

  // A new string interned later is carried alone.
  const StringRef other = producer.Intern("volta_h884gemm_64x64_nn");
  ev.kernels[0].name = other;
  v1::EventBatch third;
  encoder.Encode(ev, 3, LossCounters{}, &third);
  ASSERT_EQ(third.dictionary().strings_size(), 1);
  EXPECT_EQ(third.dictionary().strings(0).ref(), other);
  EXPECT_EQ(third.dictionary().strings(0).value(), "volta_h884gemm_64x64_nn");
  EXPECT_EQ(third.dictionary().kernel_signatures_size(), 1);
  EXPECT_EQ(third.dictionary().streams_size(), 0);
  EXPECT_EQ(third.dictionary().threads_size(), 0);
  EXPECT_EQ(third.dictionary().apis_size(), 0);
}

TEST(CodecDefinitions, ResendAllDefinitionsLetsAFreshDictionaryDecode) {
  StringTable producer;
  EventGen gen(23, &producer);
  BatchEncoder encoder(&producer);
  ProcessDictionary original;
  std::vector<EventColumns> inputs;
  std::set<uint32_t> signatures, streams, threads, apis;
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    inputs.push_back(gen.Make(20, BatchShape{}));
    v1::EventBatch batch;
    encoder.Encode(inputs.back(), seq, LossCounters{}, &batch);
    ASSERT_TRUE(original.Apply(batch.dictionary()).ok());
    for (const auto& s : batch.dictionary().kernel_signatures()) signatures.insert(s.ref());
    for (const auto& s : batch.dictionary().streams()) streams.insert(s.ref());
    for (const auto& s : batch.dictionary().threads()) threads.insert(s.ref());
    for (const auto& s : batch.dictionary().apis()) apis.insert(s.ref());
  }

  {
    v1::EventBatch again;
    encoder.Encode(inputs[1], 4, LossCounters{}, &again);
    ASSERT_FALSE(again.has_dictionary()) << "precondition: nothing new to define";
  }
  encoder.ResendAllDefinitions();
  // The batch after the reconnect uses only already-known values (the second batch again), so
  // without the re-send it would carry no definitions at all.
  const EventColumns& input = inputs[1];
  v1::EventBatch resent;
  encoder.Encode(input, 4, LossCounters{}, &resent);
  const v1::EventBatch wire = Reparse(resent);
  const v1::Dictionary& d = wire.dictionary();
  EXPECT_EQ(static_cast<size_t>(d.strings_size()), producer.size());
  EXPECT_EQ(StringRefsOf(d).size(), producer.size());
  EXPECT_EQ(static_cast<size_t>(d.kernel_signatures_size()), signatures.size());
  EXPECT_EQ(static_cast<size_t>(d.streams_size()), streams.size());
  EXPECT_EQ(static_cast<size_t>(d.threads_size()), threads.size());
  EXPECT_EQ(static_cast<size_t>(d.apis_size()), apis.size());

  ProcessDictionary fresh;
  ASSERT_TRUE(fresh.Apply(d).ok());
  EXPECT_EQ(fresh.definition_count(), original.definition_count());
  EventColumns decoded;
  const absl::Status st = DecodeBatch(wire, fresh, &decoded);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(decoded, input);
  // Re-applying the resent definitions to the old dictionary is an identical redefinition: ok.
  EXPECT_TRUE(original.Apply(d).ok());

  // And only the one batch re-sends: the next one is back to "new definitions only".
  v1::EventBatch after;
  encoder.Encode(input, 5, LossCounters{}, &after);
  EXPECT_FALSE(after.has_dictionary());
}

// ---------------------------------------------------------------------------------------------
// Expanded events.

// `events` with each kind's column in start order (stable) and every string ref re-pointed from
// `from` into `to` (by value), so that it compares equal to what FromExpandedEvent builds.
EventColumns SortedAndRemapped(EventColumns ev, const StringTable& from, const StringTable& to) {
  auto remap = [&](StringRef& ref) {
    if (ref == 0) return;
    const StringRef mapped = to.Find(from.Get(ref));
    EXPECT_NE(mapped, 0u) << "string '" << from.Get(ref) << "' missing after expansion";
    ref = mapped;
  };
  auto by_start = [](auto& v, auto start) {
    std::stable_sort(v.begin(), v.end(),
                     [&](const auto& a, const auto& b) { return start(a) < start(b); });
  };
  auto start = [](const auto& e) { return e.start_ns; };
  auto stamp = [](const auto& e) { return e.timestamp_ns; };
  by_start(ev.kernels, start);
  by_start(ev.memcpys, start);
  by_start(ev.memsets, start);
  by_start(ev.syncs, start);
  by_start(ev.memory, stamp);
  by_start(ev.apis, start);
  by_start(ev.nvtx_ranges, start);
  by_start(ev.nvtx_marks, stamp);
  by_start(ev.overheads, start);
  for (auto& e : ev.kernels) remap(e.name);
  for (auto& e : ev.apis) {
    remap(e.name);
    remap(e.call_site);
  }
  for (auto& e : ev.nvtx_ranges) {
    remap(e.domain);
    remap(e.message);
  }
  for (auto& e : ev.nvtx_marks) {
    remap(e.domain);
    remap(e.message);
  }
  for (auto& e : ev.overheads) remap(e.kind);
  return ev;
}

TEST(ExpandedEvents, RoundTripReproducesEveryEventWithResolvedStrings) {
  StringTable producer;
  EventGen gen(99, &producer);
  EventColumns input = gen.Make(40, BatchShape{});
  input.Append(gen.Make(40, BatchShape{false, false, false}));

  std::vector<v1::Event> expanded;
  ToExpandedEvents(input, producer, &expanded);
  ASSERT_EQ(expanded.size(), input.size());
  for (size_t i = 1; i < expanded.size(); ++i) {
    ASSERT_LE(StartOf(expanded[i - 1]), StartOf(expanded[i])) << "at " << i;
  }
  // Strings are resolved, not refs.
  const auto kernel = std::find_if(expanded.begin(), expanded.end(),
                                   [](const v1::Event& e) { return e.has_kernel(); });
  ASSERT_NE(kernel, expanded.end());
  EXPECT_THAT(kernel->kernel().name(), ::testing::StartsWith("void cutlass::Kernel<"));

  StringTable fresh;
  fresh.Intern("an unrelated string so that refs differ from the producer's");
  EventColumns back;
  for (const v1::Event& e : expanded) FromExpandedEvent(e, &fresh, &back);
  EXPECT_EQ(back, SortedAndRemapped(input, producer, fresh));
}

TEST(ExpandedEvents, StartAndEndOfEachKind) {
  StringTable t;
  EventColumns ev;
  ev.kernels.push_back({10, 20, 1, t.Intern("k"), {}, {}, 0});
  ev.memory.push_back({15, 2, {}, MemoryOpKind::kAlloc, MemoryKind::kDevice, false, 1, 2});
  ev.nvtx_marks.push_back({5, 0, t.Intern("m"), 1});
  ev.apis.push_back({1, 30, 1, ApiDomain::kRuntime, 1, t.Intern("cudaLaunchKernel"), 2, 0});
  std::vector<v1::Event> out;
  ToExpandedEvents(ev, t, &out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[0].has_api());
  EXPECT_EQ(StartOf(out[0]), 1);
  EXPECT_EQ(EndOf(out[0]), 30);
  EXPECT_TRUE(out[1].has_nvtx_mark());
  EXPECT_EQ(EndOf(out[1]), 5);
  EXPECT_TRUE(out[2].has_kernel());
  EXPECT_EQ(EndOf(out[2]), 20);
  EXPECT_TRUE(out[3].has_memory());
  EXPECT_EQ(StartOf(out[3]), 15);
  EXPECT_EQ(EndOf(out[3]), 15);
  EXPECT_EQ(StartOf(v1::Event{}), 0);
}

TEST(ExpandedEvents, TiesKeepEventKindOrderAndAppendKeepsEarlierOutput) {
  StringTable t;
  EventColumns ev;
  // Same start for four kinds: ties come out in Event's kind order (kernel, memory, api,
  // overhead), whatever order the columns were filled in.
  ev.overheads.push_back({100, 110, t.Intern("o"), 1});
  ev.apis.push_back({100, 110, 1, ApiDomain::kRuntime, 1, t.Intern("cudaMemcpy"), 1, 0});
  ev.kernels.push_back({100, 110, 1, t.Intern("k"), {}, {}, 0});
  ev.memory.push_back({100, 1, {}, MemoryOpKind::kFree, MemoryKind::kDevice, false, 1, 2});
  std::vector<v1::Event> out(1);  // an earlier event already in `out` stays first
  out[0].mutable_kernel()->set_start_ns(1'000'000);
  ToExpandedEvents(ev, t, &out);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].kernel().start_ns(), 1'000'000);
  EXPECT_EQ(out[1].kind_case(), v1::Event::kKernel);
  EXPECT_EQ(out[2].kind_case(), v1::Event::kMemory);
  EXPECT_EQ(out[3].kind_case(), v1::Event::kApi);
  EXPECT_EQ(out[4].kind_case(), v1::Event::kOverhead);
}

// ---------------------------------------------------------------------------------------------
// Wire size on a PyTorch-like mix.

class PyTorchLikeWorkload {
 public:
  explicit PyTorchLikeWorkload(StringTable* strings) : strings_(strings), rng_(2024) {
    for (int i = 0; i < 40; ++i) {
      kernel_names_.push_back(strings_->Intern(
          "void at::native::(anonymous namespace)::vectorized_elementwise_kernel<4, "
          "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor"
          "<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float, float, "
          "float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>)"
          "_variant_" +
          std::to_string(i)));
    }
    launch_ = strings_->Intern("cudaLaunchKernel");
    memcpy_async_ = strings_->Intern("cudaMemcpyAsync");
    stream_sync_ = strings_->Intern("cudaStreamSynchronize");
    nvtx_domain_ = strings_->Intern("torch");
    for (int i = 0; i < 12; ++i) {
      op_names_.push_back(strings_->Intern("aten::op_" + std::to_string(i)));
    }
  }

  // The next `n` events, as one batch's worth of columns.
  EventColumns Next(size_t n) {
    EventColumns ev;
    while (ev.size() < n) {
      const int roll = std::uniform_int_distribution<int>(0, 99)(rng_);
      host_ns_ += 5'000 + std::uniform_int_distribution<int64_t>(-800, 800)(rng_);
      const uint64_t corr = ++correlation_;
      if (roll < 90) {  // a kernel launch: API call + kernel, ~45% each
        const int64_t api_dur = 2'500 + std::uniform_int_distribution<int64_t>(0, 2'000)(rng_);
        ev.apis.push_back(
            {host_ns_, host_ns_ + api_dur, corr, ApiDomain::kRuntime, 211, launch_, 31337, 0});
        const int which = std::uniform_int_distribution<int>(0, 39)(rng_);
        const int64_t dur = 1'500 + which * 80 +
                            std::uniform_int_distribution<int64_t>(0, 1'000)(rng_);
        const int64_t start = std::max(gpu_ns_, host_ns_ + 4'000);
        gpu_ns_ = start + dur;
        ev.kernels.push_back({start, gpu_ns_, corr, kernel_names_[which], {0, 1, 7},
                              LaunchShape{static_cast<uint32_t>(64 + which), 1, 1, 256, 1, 1, 32,
                                          0, 0},
                              0});
      } else if (roll < 94) {  // a copy: API call + memcpy
        ev.apis.push_back({host_ns_, host_ns_ + 6'000, corr, ApiDomain::kRuntime, 41,
                           memcpy_async_, 31337, 0});
        const int64_t start = std::max(gpu_ns_, host_ns_ + 4'000);
        gpu_ns_ = start + 9'000;
        ev.memcpys.push_back({start, gpu_ns_, corr, {0, 1, 7}, CopyKind::kHtoD,
                              MemoryKind::kPinned, MemoryKind::kDevice, true, 4 << 20, 0, 0});
      } else if (roll < 96) {  // a stream synchronize: API + sync record
        const int64_t end = std::max(gpu_ns_, host_ns_ + 2'000);
        ev.apis.push_back({host_ns_, end, corr, ApiDomain::kRuntime, 131, stream_sync_, 31337,
                           0});
        ev.syncs.push_back({host_ns_, end, corr, {0, 1, 7}, SyncKind::kStream});
        host_ns_ = end;
      } else {  // an NVTX range per op
        ev.nvtx_ranges.push_back({host_ns_, host_ns_ + 40'000, nvtx_domain_,
                                  op_names_[static_cast<size_t>(roll) % op_names_.size()], 31337,
                                  1});
      }
    }
    return ev;
  }

 private:
  StringTable* strings_;
  std::mt19937_64 rng_;
  std::vector<StringRef> kernel_names_, op_names_;
  StringRef launch_ = 0, memcpy_async_ = 0, stream_sync_ = 0, nvtx_domain_ = 0;
  int64_t host_ns_ = 1'712'345'678'000'000'000;
  int64_t gpu_ns_ = 0;
  uint64_t correlation_ = 1'000;
};

TEST(CodecWireSize, PyTorchLikeMixStaysWithinSixteenBytesPerEvent) {
  StringTable producer;
  PyTorchLikeWorkload workload(&producer);
  BatchEncoder encoder(&producer);
  ProcessDictionary dict;
  size_t total_bytes = 0, total_events = 0, kernels = 0, apis = 0;
  uint64_t sequence = 1;
  while (total_events < 100'000) {
    const EventColumns ev = workload.Next(2'000);
    kernels += ev.kernels.size();
    apis += ev.apis.size();
    v1::EventBatch batch;
    encoder.Encode(ev, sequence++, LossCounters{}, &batch);
    total_bytes += batch.ByteSizeLong();
    total_events += ev.size();
    // The measured batches must also decode back to their input.
    ASSERT_TRUE(dict.Apply(batch.dictionary()).ok());
    EventColumns decoded;
    ASSERT_TRUE(DecodeBatch(batch, dict, &decoded).ok());
    ASSERT_EQ(decoded, ev);
  }
  // The mix is what the test says it is.
  EXPECT_NEAR(static_cast<double>(kernels) / total_events, 0.45, 0.05);
  EXPECT_NEAR(static_cast<double>(apis) / total_events, 0.48, 0.05);

  const double per_event = static_cast<double>(total_bytes) / static_cast<double>(total_events);
  std::cout << "[ wire size ] " << total_events << " events, " << total_bytes << " bytes, "
            << per_event << " bytes/event\n";
  ::testing::Test::RecordProperty("bytes_per_event", std::to_string(per_event));
  EXPECT_LE(per_event, 16.0);
}

}  // namespace
}  // namespace gpuspy

namespace gpuspy {
namespace {

// The kinds added after the first wire version: graph launches, external correlations, pools.
TEST(CodecRoundTrip, GraphLaunchesExternalCorrelationsAndPoolsSurvive) {
  StringTable strings;
  EventColumns ev;
  ev.graph_launches.push_back({5000, 9000, 77, {1, 2, 3}, 42});
  ev.graph_launches.push_back({4000, 4500, 70, {0, 1, 7}, 43});  // out of order: negative deltas
  ev.external_correlations.push_back({77, 3, 1'000'000'007});
  ev.external_correlations.push_back({70, 3, 5});
  ev.memory_pools.push_back({4100, 9, 0, PoolOpKind::kCreated, true, 0x7e0000000000, 2ull << 30,
                             1ull << 30, 0});
  ev.memory_pools.push_back({8100, 11, 1, PoolOpKind::kTrimmed, false, 0x7d0000000000, 1ull << 30,
                             0, 12345});
  BatchEncoder encoder(&strings);
  v1::EventBatch batch;
  encoder.Encode(ev, 1, {}, &batch);
  EXPECT_EQ(CountEvents(batch), 6u);
  ProcessDictionary dict;
  ASSERT_TRUE(dict.Apply(batch.dictionary()).ok());
  EventColumns out;
  ASSERT_TRUE(DecodeBatch(batch, dict, &out).ok());
  EXPECT_TRUE(out == ev);

  std::vector<v1::Event> expanded;
  ToExpandedEvents(out, strings, &expanded);
  StringTable fresh;
  EventColumns back;
  for (const auto& e : expanded) FromExpandedEvent(e, &fresh, &back);
  EXPECT_EQ(back.graph_launches.size(), 2u);
  EXPECT_EQ(back.memory_pools.size(), 2u);
  EXPECT_EQ(back.external_correlations.size(), 2u);

  v1::EventBatch bad = batch;
  bad.mutable_memory_pools()->set_packed_kinds(0, 1u << 5);
  EventColumns untouched;
  absl::Status st = DecodeBatch(bad, dict, &untouched);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("memory_pools.packed_kinds[0]"), std::string::npos);
  EXPECT_TRUE(untouched.empty());
}

// kUsage (caching-allocator samples from Kineto [memory] events) needs a third op bit; the
// earlier ops keep their packed values, and a managed usage sample does not read back as another op.
TEST(CodecRoundTrip, AllocatorUsageSamplesSurviveNextToPoolOps) {
  StringTable strings;
  EventColumns ev;
  ev.memory_pools.push_back({100, 0, 0, PoolOpKind::kUsage, false, 0, 6ull << 30, 0, 5ull << 30});
  ev.memory_pools.push_back({200, 0, 1, PoolOpKind::kUsage, true, 0, 1ull << 30, 0, 1});
  ev.memory_pools.push_back({300, 5, 0, PoolOpKind::kTrimmed, true, 0x7d0000000000, 1, 0, 0});
  BatchEncoder encoder(&strings);
  v1::EventBatch batch;
  encoder.Encode(ev, 1, {}, &batch);
  EXPECT_EQ(batch.memory_pools().packed_kinds(2), 3u | 1u << 2);  // unchanged layout
  ProcessDictionary dict;
  ASSERT_TRUE(dict.Apply(batch.dictionary()).ok());
  EventColumns out;
  ASSERT_TRUE(DecodeBatch(batch, dict, &out).ok());
  EXPECT_TRUE(out == ev);

  v1::EventBatch bad = batch;
  bad.mutable_memory_pools()->set_packed_kinds(0, 1u << 3 | 1u);  // op 5: beyond kUsage
  EventColumns untouched;
  EXPECT_EQ(DecodeBatch(bad, dict, &untouched).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpuspy

namespace gpuspy {
namespace {

// Collectives: untimed, correlation-keyed, three string refs, 64-bit sizes, sequence -1 or not.
EventColumns TwoCollectives(StringTable* t) {
  EventColumns ev;
  ev.kernels.push_back({1000, 3000, 60047, t->Intern("ncclKernel_AllReduce_RING_LL_Sum_float"),
                        {0, 1, 40}, {}, 0});
  ev.kernels.push_back({500, 700, 19832, t->Intern("ncclKernel_Broadcast_RING_LL_Sum_int8_t"),
                        {0, 1, 40}, {}, 0});
  ev.collectives.push_back({60047, t->Intern("allreduce"), t->Intern("Float"), t->Intern("0"),
                            6637568ull * 4, 6637568ull * 4, 2, -1});
  // Correlation id below the previous one (negative delta), sizes past 32 bits, a sequence,
  // unknown dtype and group (ref 0).
  ev.collectives.push_back({19832, t->Intern("broadcast"), 0, 0, 5ull << 33, 0, 8, 12345});
  return ev;
}

TEST(CodecRoundTrip, CollectivesSurviveTheWireAndTheExpandedForm) {
  StringTable strings;
  const EventColumns ev = TwoCollectives(&strings);
  BatchEncoder encoder(&strings);
  v1::EventBatch batch;
  encoder.Encode(ev, 1, {}, &batch);
  const v1::EventBatch wire = Reparse(batch);
  EXPECT_EQ(CountEvents(wire), 4u);
  ASSERT_EQ(wire.collectives().correlation_delta_size(), 2);
  EXPECT_EQ(wire.collectives().correlation_delta(1), 19832 - 60047);
  ProcessDictionary dict;
  ASSERT_TRUE(dict.Apply(wire.dictionary()).ok());
  EventColumns out;
  ASSERT_TRUE(DecodeBatch(wire, dict, &out).ok());
  EXPECT_EQ(out.collectives, ev.collectives);
  EXPECT_TRUE(out == ev);
  // Untimed: the batch's time range is its kernels'.
  EXPECT_EQ(ev.TimeRange(), std::make_pair(int64_t{500}, int64_t{3000}));

  std::vector<v1::Event> expanded;
  ToExpandedEvents(out, dict.strings(), &expanded);
  ASSERT_EQ(expanded.size(), 4u);
  const auto first = std::find_if(expanded.begin(), expanded.end(),
                                   [](const v1::Event& e) { return e.has_collective(); });
  ASSERT_NE(first, expanded.end());
  EXPECT_EQ(StartOf(*first), 0);
  EXPECT_EQ(EndOf(*first), 0);
  EXPECT_EQ(first->collective().correlation_id(), 60047u);
  EXPECT_EQ(first->collective().op(), "allreduce");
  EXPECT_EQ(first->collective().dtype(), "Float");
  EXPECT_EQ(first->collective().group(), "0");
  EXPECT_EQ(first->collective().in_bytes(), 26550272u);
  EXPECT_EQ(first->collective().group_size(), 2u);
  EXPECT_EQ(first->collective().sequence(), -1);

  StringTable fresh;
  fresh.Intern("shifts every ref");
  EventColumns back;
  for (const auto& e : expanded) FromExpandedEvent(e, &fresh, &back);
  ASSERT_EQ(back.collectives.size(), 2u);
  EXPECT_EQ(fresh.Get(back.collectives[0].op), "allreduce");
  EXPECT_EQ(fresh.Get(back.collectives[0].group), "0");
  EXPECT_EQ(back.collectives[1].dtype, 0u);
  EXPECT_EQ(back.collectives[1].in_bytes, 5ull << 33);
  EXPECT_EQ(back.collectives[1].sequence, 12345);
}

// Op work: timed like its op, thread and two string refs, 64-bit figures, the source enum.
TEST(CodecRoundTrip, OpWorkSurvivesTheWireAndTheExpandedForm) {
  StringTable strings;
  EventColumns ev;
  ev.op_works.push_back({2000, 2600, 4037, strings.Intern("aten::mm"), strings.Intern("float"),
                         2ull * 2048 * 125 * 320, 4ull * 700000, WorkSource::kInputShapes});
  // Earlier start (negative delta), another thread, FLOPs past 32 bits, no bytes, no type.
  ev.op_works.push_back({1500, 9000, 23695, strings.Intern("aten::conv2d"), 0, 7ull << 40, 0,
                         WorkSource::kProfilerFlops});
  BatchEncoder encoder(&strings);
  v1::EventBatch batch;
  encoder.Encode(ev, 1, {}, &batch);
  const v1::EventBatch wire = Reparse(batch);
  EXPECT_EQ(CountEvents(wire), 2u);
  ProcessDictionary dict;
  ASSERT_TRUE(dict.Apply(wire.dictionary()).ok());
  EventColumns out;
  ASSERT_TRUE(DecodeBatch(wire, dict, &out).ok());
  EXPECT_EQ(out.op_works, ev.op_works);
  EXPECT_EQ(ev.TimeRange(), std::make_pair(int64_t{1500}, int64_t{9000}));

  std::vector<v1::Event> expanded;
  ToExpandedEvents(out, dict.strings(), &expanded);
  ASSERT_EQ(expanded.size(), 2u);
  EXPECT_EQ(expanded[0].op_work().op(), "aten::conv2d");
  EXPECT_EQ(StartOf(expanded[0]), 1500);
  EXPECT_EQ(EndOf(expanded[0]), 9000);
  EXPECT_EQ(expanded[0].op_work().source(), v1::WORK_SOURCE_PROFILER_FLOPS);
  EXPECT_EQ(expanded[1].op_work().flops(), 2ull * 2048 * 125 * 320);
  StringTable fresh;
  fresh.Intern("shifts every ref");
  EventColumns back;
  for (const auto& e : expanded) FromExpandedEvent(e, &fresh, &back);
  ASSERT_EQ(back.op_works.size(), 2u);
  EXPECT_EQ(fresh.Get(back.op_works[1].op), "aten::mm");
  EXPECT_EQ(fresh.Get(back.op_works[1].dtype), "float");
  EXPECT_EQ(back.op_works[0].flops, 7ull << 40);

  // A source value no producer writes is refused, like any bad enum.
  v1::EventBatch bad = wire;
  bad.mutable_op_works()->set_source(0, 9);
  EventColumns refused;
  EXPECT_FALSE(DecodeBatch(bad, dict, &refused).ok());
}

// Counter samples: timed, a device, four readings of which some are unmeasured (-1).
TEST(CodecRoundTrip, CounterSamplesSurviveTheWireAndTheExpandedForm) {
  StringTable strings;
  EventColumns ev;
  ev.counter_samples.push_back({5'000'000, 6'000'000, 0, 78.5f, 31.25f, 100.0f, 100.0f});
  // Earlier start, another device, two readings unmeasured.
  ev.counter_samples.push_back({4'000'000, 5'000'000, 3, 0.0f, 90.0f, -1.0f, -1.0f});
  BatchEncoder encoder(&strings);
  v1::EventBatch batch;
  encoder.Encode(ev, 1, {}, &batch);
  const v1::EventBatch wire = Reparse(batch);
  EXPECT_EQ(CountEvents(wire), 2u);
  ProcessDictionary dict;
  ASSERT_TRUE(dict.Apply(wire.dictionary()).ok());
  EventColumns out;
  ASSERT_TRUE(DecodeBatch(wire, dict, &out).ok());
  EXPECT_EQ(out.counter_samples, ev.counter_samples);
  EXPECT_EQ(ev.TimeRange(), std::make_pair(int64_t{4'000'000}, int64_t{6'000'000}));

  std::vector<v1::Event> expanded;
  ToExpandedEvents(out, dict.strings(), &expanded);
  ASSERT_EQ(expanded.size(), 2u);
  EXPECT_EQ(StartOf(expanded[0]), 4'000'000);
  EXPECT_EQ(EndOf(expanded[0]), 5'000'000);
  EXPECT_EQ(expanded[0].counter_sample().device_id(), 3u);
  EXPECT_EQ(expanded[1].counter_sample().tensor_active_pct(), 78.5f);
  StringTable fresh;
  EventColumns back;
  for (const auto& e : expanded) FromExpandedEvent(e, &fresh, &back);
  ASSERT_EQ(back.counter_samples.size(), 2u);
  EXPECT_EQ(back.counter_samples[0], ev.counter_samples[1]);
  EXPECT_EQ(back.counter_samples[1], ev.counter_samples[0]);

  // A reading is a percent: 1000 passes, NaN and anything above are refused; any negative value
  // reads as unmeasured.
  v1::EventBatch edge = wire;
  edge.mutable_counter_samples()->set_dram_throughput_pct(0, 1000.0f);
  edge.mutable_counter_samples()->set_sm_active_pct(0, -7.0f);
  EventColumns kept;
  ASSERT_TRUE(DecodeBatch(edge, dict, &kept).ok());
  EXPECT_EQ(kept.counter_samples[0].dram_throughput_pct, 1000.0f);
  EXPECT_EQ(kept.counter_samples[0].sm_active_pct, -1.0f);
  for (const float hostile : {1000.5f, std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity()}) {
    v1::EventBatch bad = wire;
    bad.mutable_counter_samples()->set_tensor_active_pct(1, hostile);
    EventColumns refused;
    EXPECT_FALSE(DecodeBatch(bad, dict, &refused).ok()) << hostile;
  }
  v1::EventBatch short_column = wire;
  short_column.mutable_counter_samples()->mutable_gpu_active_pct()->RemoveLast();
  EventColumns refused;
  EXPECT_FALSE(DecodeBatch(short_column, dict, &refused).ok());
}

// An import is cut into batches with Split; each collective must land beside its kernel.
TEST(EventColumnsSplit, ACollectiveGoesToThePartHoldingItsKernel) {
  EventColumns ev;
  for (uint64_t i = 0; i < 100; ++i) {
    const int64_t start = static_cast<int64_t>(i) * 1000;
    ev.kernels.push_back({start, start + 10, 1000 + i, 1, {}, {}, 0});
  }
  // Few collectives, of late kernels: spread by index they would land in the first parts.
  ev.collectives.push_back({1090, 2, 3, 4, 8, 8, 2, -1});
  ev.collectives.push_back({1099, 2, 3, 4, 8, 8, 2, -1});
  ev.collectives.push_back({7, 2, 3, 4, 8, 8, 2, -1});  // no such kernel: apportioned by index
  const std::vector<EventColumns> parts = ev.Split(4);
  ASSERT_EQ(parts.size(), 4u);
  size_t total = 0;
  for (const EventColumns& part : parts) {
    total += part.collectives.size();
    std::set<uint64_t> kernels;
    for (const auto& k : part.kernels) kernels.insert(k.correlation_id);
    for (const auto& c : part.collectives) {
      if (c.correlation_id == 7) continue;
      EXPECT_TRUE(kernels.contains(c.correlation_id)) << c.correlation_id;
    }
  }
  EXPECT_EQ(total, 3u);
  EXPECT_EQ(parts[3].collectives.size(), 2u);
  EXPECT_EQ(parts[2].collectives.size(), 1u);  // index 2 of 3 -> part 2
}

TEST(CodecDefinitions, ThreadNamesTravelWithTheirThreadsDefinitions) {
  StringTable producer;
  const StringRef launch = producer.Intern("cudaLaunchKernel");
  const absl::flat_hash_map<uint32_t, StringRef> names = {{12, producer.Intern("thread 12 (pt_pin_memory)")}};
  EventColumns ev;
  ev.apis.push_back({100, 110, 1, ApiDomain::kRuntime, 211, launch, 11, 0});  // unnamed
  ev.apis.push_back({120, 130, 2, ApiDomain::kRuntime, 211, launch, 12, 0});
  BatchEncoder encoder(&producer);
  encoder.SetThreadNames(&names);
  v1::EventBatch batch;
  encoder.Encode(ev, 1, LossCounters{}, &batch);
  ProcessDictionary dict;
  ASSERT_TRUE(dict.Apply(batch.dictionary()).ok());
  ASSERT_EQ(dict.thread_names().size(), 1u);
  ASSERT_TRUE(dict.thread_names().contains(12));
  EXPECT_EQ(dict.strings().Get(dict.thread_names().at(12)), "thread 12 (pt_pin_memory)");
}

}  // namespace
}  // namespace gpuspy
