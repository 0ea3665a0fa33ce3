// PyTorch profiler (Kineto) Chrome-trace JSON -> gpuspy events, streaming.
//
// Files reach hundreds of MB, so the JSON is read with a SAX parser straight from the (gzip or
// plain) file: memory holds one trace event at a time plus the model events produced, never a
// DOM of the whole file.
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

// Reads `path` (gzip'd or plain). InvalidArgument for JSON that does not parse (with the byte
// offset), DataLoss for a truncated gzip stream, NotFound for a missing file. Events with
// missing or ill-typed fields, or negative durations, are skipped and counted, not fatal.
absl::StatusOr<KinetoTrace> ReadKinetoTrace(const std::string& path);

// The same for a JSON document already in memory (tests, fuzzing).
absl::StatusOr<KinetoTrace> ParseKinetoTrace(const std::string& json);

// "1695835572943613.592" (µs, as Kineto writes them) -> ns, exactly (no double rounding).
bool MicrosToNanos(const std::string& text, int64_t* ns);

}  // namespace gpuspy::importers
