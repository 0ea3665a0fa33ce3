// Bytes per event: gpuspy's wire form (what the profiled process sends, no general-purpose
// compressor) and at-rest form (the wire batch zstd'ed by the collector), against the same events
// as Kineto JSON (written by gpuspy's exporter in Kineto's dialect), gzip'd and zstd -19'd. Inputs:
// the real PyTorch traces in ../shared/traces (imported) and the synthetic PyTorch-like mix.
// Also the encode/decode CPU cost per event. A plain driver printing one table row per input.
//
//   size_bench [--header] FILE...        Kineto traces (.json or .json.gz)
//   size_bench --synthetic               the launch-storm mix from tools/replay
#include <zlib.h>
#include <zstd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "codec/batch_decoder.h"
#include "codec/batch_encoder.h"
#include "codec/expanded_events.h"
#include "codec/process_dictionary.h"
#include "exporters/chrome_trace/chrome_trace_writer.h"
#include "importers/kineto/kineto_reader.h"
#include "tools/replay/synthetic_workload.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBatchEvents = 4096;  // the producer's default GPUSPY_BATCH_EVENTS

size_t Gzip(const std::string& s) {
  uLongf n = compressBound(s.size());
  std::string out(n, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &n, reinterpret_cast<const Bytef*>(s.data()),
                s.size(), 6) != Z_OK) {
    return 0;
  }
  return n;
}

size_t Zstd(const std::string& s, int level) {
  std::string out(ZSTD_compressBound(s.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), s.data(), s.size(), level);
  return ZSTD_isError(n) ? 0 : n;
}

void Measure(const std::string& label, const gpuspy::v1::ProcessIdentity& identity,
             const gpuspy::StringTable& strings, const gpuspy::EventColumns& events) {
  const size_t n = events.size();
  if (n == 0) {
    std::printf("| %s | no events |\n", label.c_str());
    return;
  }
  // Wire: batches of 4096 events, dictionary definitions included as they are first used.
  gpuspy::BatchEncoder encoder(&strings);
  std::vector<gpuspy::v1::EventBatch> batches;
  const auto t0 = Clock::now();
  uint64_t seq = 1;
  for (const gpuspy::EventColumns& part : events.Split((n + kBatchEvents - 1) / kBatchEvents)) {
    encoder.Encode(part, seq++, {}, &batches.emplace_back());
  }
  const double encode_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / n;
  size_t wire = 0, at_rest = 0, definitions = 0;
  std::vector<std::string> bytes;
  for (const auto& b : batches) {
    definitions += b.has_dictionary() ? b.dictionary().ByteSizeLong() : 0;
    bytes.push_back(b.SerializeAsString());
    wire += bytes.back().size();
    at_rest += std::min(bytes.back().size(), Zstd(bytes.back(), 3));  // as the collector stores it
  }
  gpuspy::ProcessDictionary dict;
  gpuspy::EventColumns decoded;
  const auto t1 = Clock::now();
  for (const auto& s : bytes) {
    gpuspy::v1::EventBatch b;
    b.ParseFromString(s);
    (void)dict.Apply(b.dictionary());
    (void)gpuspy::DecodeBatch(b, dict, &decoded);
  }
  const double decode_ns = std::chrono::duration<double, std::nano>(Clock::now() - t1).count() / n;
  // The same events as Kineto JSON.
  gpuspy::exporters::ExportedProcess p;
  p.identity = identity;
  gpuspy::ToExpandedEvents(events, strings, &p.events);
  const std::string json = gpuspy::exporters::ChromeTraceJson({p});
  const double dn = static_cast<double>(n);
  std::printf("| %s | %zu | %.1f | %.1f | %.1f | %.0f | %.1f | %.1f | %.0f / %.0f |\n", label.c_str(), n,
              wire / dn, (wire - definitions) / dn, at_rest / dn, json.size() / dn, Gzip(json) / dn, Zstd(json, 19) / dn,
              encode_ns, decode_ns);
}

}  // namespace

int main(int argc, char** argv) {
  int i = 1;
  if (i < argc && std::string(argv[i]) == "--header") {
    std::printf("| input | events | wire B/event | wire without first-use definitions | at rest B/event (zstd -3) | same events as Kineto JSON B/event | JSON gzip -6 | JSON zstd -19 | encode / decode ns/event |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    ++i;
  }
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--synthetic") {
      gpuspy::synthetic::SyntheticOptions o;
      o.scenario = gpuspy::synthetic::Scenario::kLaunchStorm;
      o.steps = 20;
      const auto rank = gpuspy::synthetic::GenerateRank(o, 0);
      gpuspy::EventColumns all;
      for (const auto& s : rank.steps) all.Append(s);
      Measure("synthetic PyTorch-like mix (launch storm, 20 steps)", rank.identity, rank.strings, all);
      continue;
    }
    auto trace = gpuspy::importers::ReadKinetoTrace(arg);
    if (!trace.ok()) {
      std::printf("| %s | error: %s |\n", arg.c_str(), std::string(trace.status().message()).c_str());
      continue;
    }
    Measure(std::filesystem::path(arg).filename().string(), trace->identity, trace->strings,
            trace->events);
  }
  return 0;
}
