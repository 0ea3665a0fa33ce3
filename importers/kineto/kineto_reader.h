// PyTorch profiler (Kineto) Chrome-trace JSON -> gpuspy events.
//
// Files reach hundreds of MB, so a plain file is read from its mapping, a gzip file inflated as
// it is read (gzip_text_stream.h), and the text indexed by simdjson's structural pass and walked
// in place over that index (json_tokens.h, kineto_walk.h), a piece at a time for large files:
// memory holds the model events produced, a window of the text and one piece's structural index,
// never a DOM of the whole file (trace_bytes.h, kineto_mapping.h). Anything the pieces cannot
// read is read again as one document, whose result and errors are the reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "gpuspy/v1/identity.pb.h"
#include "importers/kineto/trace_bytes.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::importers {

struct KinetoImportStats {
  uint64_t trace_events = 0;                  // entries of traceEvents
  std::map<std::string, uint64_t> imported;   // by Kineto category
  std::map<std::string, uint64_t> skipped;    // by category (cpu_op, ac2g, ...) or reason
  uint64_t collectives = 0;                   // NCCL kernels whose args say what they move
  uint64_t cut_strings = 0;  // names longer than kMaxStringBytes, cut to it (bounded_strings.h)
  // A trace written by gpuspy's exporter says what it left out ("gpuspyNotExported": events the
  // format has no place for, by what they are): why a re-import holds fewer events than the job
  // that was exported.
  std::map<std::string, uint64_t> not_exported;
};

struct KinetoTrace {
  v1::ProcessIdentity identity;  // rank/world size from distributedInfo, devices from deviceProperties
  StringTable strings;
  EventColumns events;
  KinetoImportStats stats;
  // The profiled process's host threads as its thread_name metadata names them: OS thread id ->
  // a string of `strings` ("thread 4037 (python3.8)"); sent with the threads' definitions.
  absl::flat_hash_map<uint32_t, StringRef> thread_names;
};

// Where the time of one read went (the benchmark's per-stage figures).
struct KinetoReadTimings {
  uint64_t file_bytes = 0;   // on disk
  uint64_t json_bytes = 0;   // uncompressed
  int64_t inflate_ns = 0;    // gzip only
  int64_t index_ns = 0;      // simdjson's structural pass (over each piece, summed)
  int64_t walk_ns = 0;       // reading each event's fields and mapping it to model events
  int64_t finish_ns = 0;     // time order, base-time shift, Python call sites
  uint32_t pieces = 0;       // traceEvents pieces read one by one (0: read as one document)
  uint32_t rejected_cuts = 0;  // candidate cuts simdjson rejected (inside a string or value)
  // The most JSON text in memory at once, beside the piece being parsed: a gzip file inflated as
  // it is read holds its window, one inflated whole (or a plain file read as one document) all
  // of it, a plain file read in pieces none (each piece is read from the file).
  uint64_t text_held_bytes = 0;
  uint64_t event_bytes = 0;  // the events read, in the internal form (EventColumns::Bytes)
};

// What a read may cost, set by the caller (`--max-trace-bytes`), and who hears how far it got.
struct KinetoReadLimits {
  uint64_t max_json_bytes = kDefaultMaxJsonBytes;  // a plain file's size, or what gzip inflates to
  // Called on the reading thread as each piece of the JSON text is done (bytes read, bytes in
  // all), and once with both equal at the end: the CLI's progress line. A text read whole (under
  // two pieces, a fraction of a second) is told only at the end.
  std::function<void(uint64_t read, uint64_t total)> progress;
};

// Reads `path` (gzip'd or plain). InvalidArgument for JSON that does not parse (with the byte
// offset), DataLoss for a truncated gzip stream, NotFound for a missing file. Events with
// missing or ill-typed fields, or negative durations, are skipped and counted, not fatal; so are
// GPU records identical to one already read (duplicates). Negative timestamps (before the
// trace's zero) are kept in their place in time.
// Errors name the file. ResourceExhausted past `limits`; InvalidArgument for text holding one
// value too long to parse in bounded memory (long_values.h). Names over kMaxStringBytes are cut
// and counted (stats.cut_strings).
// `reuse` (optional): an earlier trace's event columns, taken over (cleared, their capacity kept)
// as this trace's: a thread reading files one after another then fills the same memory each
// time, where new columns faulted in fresh pages and left the freed ones as holes in the heap
// (8 ranks: +25 MB of peak memory for the second file).
absl::StatusOr<KinetoTrace> ReadKinetoTrace(const std::string& path,
                                           KinetoReadTimings* timings = nullptr,
                                           const KinetoReadLimits& limits = {},
                                           EventColumns* reuse = nullptr);

// Large traces (at least two pieces) are read a piece of traceEvents at a time: simdjson indexes
// one piece (its index is 4 bytes per structural character, ~0.6x of a trace, for that piece
// only), the walk maps it, and the JSON behind it is handed back to the system (drop-behind), so
// memory holds about the model events plus one piece, not the text plus the whole index.
inline constexpr size_t kTracePieceBytes = 1u << 20;

// ReadKinetoTrace with another piece size (tests: small pieces exercise many boundaries on small
// files; 0 reads the whole document at once).
absl::StatusOr<KinetoTrace> ReadKinetoTraceInPieces(const std::string& path, size_t piece_bytes,
                                                   KinetoReadTimings* timings = nullptr,
                                                   const KinetoReadLimits& limits = {},
                                                   EventColumns* reuse = nullptr);

// The same for a JSON document already in memory (tests, fuzzing); `piece_bytes` as above.
absl::StatusOr<KinetoTrace> ParseKinetoTrace(const std::string& json, size_t piece_bytes = 0,
                                            KinetoReadTimings* timings = nullptr);

// "1695835572943613.592" (µs, as Kineto writes them) -> ns, exactly (no double rounding).
bool MicrosToNanos(const std::string& text, int64_t* ns);

}  // namespace gpuspy::importers
