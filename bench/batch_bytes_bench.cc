// What the ingest service does with each batch message before BatchIngestor decodes it, on
// gpuspy-replay's batches (launch_storm steps, ~4096 events a batch), a message as gRPC hands it
// over (a ByteBuffer of 8 KiB slices, as a socket delivers them):
//   former:   the generated handler's parse of the message, then the batch re-serialized for the
//             store (what ingest did until the store kept the bytes as received)
//   received: the bytes copied out of the buffer, parsed, and the batch field's bytes taken out
//             of them (batch_bytes.h), which the store keeps
// Google Benchmark.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "codec/batch_encoder.h"
#include "collector/ingest/batch_bytes.h"
#include "gpuspy/v1/services.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::collector {
namespace {

constexpr size_t kBatchEvents = 4096;
constexpr size_t kSliceBytes = 8192;

// One batch message of whole launch_storm steps, cut at kBatchEvents, as slices.
struct Message {
  std::string bytes;
  size_t events = 0;
  grpc::ByteBuffer Buffer() const {
    std::vector<grpc::Slice> slices;
    for (size_t at = 0; at < bytes.size(); at += kSliceBytes) {
      slices.emplace_back(bytes.data() + at, std::min(kSliceBytes, bytes.size() - at));
    }
    return grpc::ByteBuffer(slices.data(), slices.size());
  }
};

const Message& Batch() {
  static const Message* message = [] {
    synthetic::SyntheticOptions o;
    o.scenario = synthetic::Scenario::kLaunchStorm;
    o.steps = 4;
    synthetic::SyntheticRank rank = synthetic::GenerateRank(o, 0);
    BatchEncoder encoder(&rank.strings);
    EventColumns chunk;
    for (const EventColumns& step : rank.steps) {
      if (chunk.size() >= kBatchEvents) break;
      chunk.Append(step);
    }
    // The second batch of a stream: its names defined by the first, as in steady state.
    v1::ClientMessage m;
    encoder.Encode(chunk, 1, {}, m.mutable_batch());
    encoder.Encode(chunk, 2, {}, m.mutable_batch());
    auto* out = new Message{m.SerializeAsString(), chunk.size()};
    return out;
  }();
  return *message;
}

void Label(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(Batch().events));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(Batch().bytes.size()));
}

void BM_FormerParseAndReserialize(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    grpc::ByteBuffer raw = Batch().Buffer();
    state.ResumeTiming();
    v1::ClientMessage in;
    if (!grpc::SerializationTraits<v1::ClientMessage>::Deserialize(&raw, &in).ok()) std::abort();
    std::string payload;
    if (!in.batch().SerializeToString(&payload)) std::abort();
    benchmark::DoNotOptimize(payload);
  }
  Label(state);
}
BENCHMARK(BM_FormerParseAndReserialize)->Unit(benchmark::kMicrosecond);

void BM_ReceivedBytes(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    grpc::ByteBuffer raw = Batch().Buffer();
    state.ResumeTiming();
    std::vector<grpc::Slice> slices;
    if (!raw.Dump(&slices).ok()) std::abort();
    std::string bytes;
    bytes.reserve(raw.Length());
    for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    v1::ClientMessage in;
    if (!in.ParseFromString(bytes) || !TakeBatchBytes(&bytes)) std::abort();
    benchmark::DoNotOptimize(bytes);
  }
  Label(state);
}
BENCHMARK(BM_ReceivedBytes)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpuspy::collector

BENCHMARK_MAIN();
