// PyTorch profiler (Kineto) Chrome-trace JSON -> gpuspy events.
//
// Files reach hundreds of MB, so the file is mmap'd (or inflated once by libdeflate) and walked
// in place with simdjson's On Demand API: memory holds the JSON text, simdjson's structural index
// and the model events produced, never a DOM of the whole file (trace_bytes.h, kineto_mapping.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "gpuspy/v1/identity.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::importers {

struct KinetoImportStats {
  uint64_t trace_events = 0;                  // entries of traceEvents
  std::map<std::string, uint64_t> imported;   // by Kineto category
  std::map<std::string, uint64_t> skipped;    // by category (cpu_op, ac2g, ...) or reason
  uint64_t collectives = 0;                   // NCCL kernels whose args say what they move
};

struct KinetoTrace {
  v1::ProcessIdentity identity;  // rank/world size from distributedInfo, devices from deviceProperties
  StringTable strings;
  EventColumns events;
  KinetoImportStats stats;
};

// Where the time of one read went (the benchmark's per-stage figures).
struct KinetoReadTimings {
  uint64_t file_bytes = 0;   // on disk
  uint64_t json_bytes = 0;   // uncompressed
  int64_t inflate_ns = 0;    // gzip only
  int64_t index_ns = 0;      // simdjson's structural pass over the whole text
  int64_t walk_ns = 0;       // reading each event's fields and mapping it to model events
  int64_t finish_ns = 0;     // time order, base-time shift, Python call sites
};

// Reads `path` (gzip'd or plain). InvalidArgument for JSON that does not parse (with the byte
// offset), DataLoss for a truncated gzip stream, NotFound for a missing file. Events with
// missing or ill-typed fields, or negative durations, are skipped and counted, not fatal; so are
// GPU records identical to one already read (duplicates). Negative timestamps (before the
// trace's zero) are kept in their place in time.
// Errors name the file.
absl::StatusOr<KinetoTrace> ReadKinetoTrace(const std::string& path,
                                           KinetoReadTimings* timings = nullptr);

// The same for a JSON document already in memory (tests, fuzzing).
absl::StatusOr<KinetoTrace> ParseKinetoTrace(const std::string& json);

// "1695835572943613.592" (µs, as Kineto writes them) -> ns, exactly (no double rounding).
bool MicrosToNanos(const std::string& text, int64_t* ns);

}  // namespace gpuspy::importers
