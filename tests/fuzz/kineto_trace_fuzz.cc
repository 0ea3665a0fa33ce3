// libFuzzer target: the Kineto trace importer on arbitrary bytes must return a status, never
// crash, hang or leak (run under ASan/UBSan by tests/fuzz/run.sh). Two ways in, as users have:
// the JSON in memory, and a file (mmap, and the gzip inflate when the bytes start with gzip's
// magic: seeds include gzip'd trace heads, whose mutations are truncated and damaged streams).
// Each way is also read in small pieces, which must give exactly what the whole read gives.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "importers/kineto/kineto_reader.h"

namespace {

void Check(const absl::StatusOr<gpuspy::importers::KinetoTrace>& trace) {
  if (!trace.ok()) return;
  // Whatever was accepted must be internally consistent.
  for (const auto& k : trace->events.kernels) {
    if (k.end_ns < k.start_ns) __builtin_trap();
  }
}

// One file per fuzzing process, rewritten for each input.
const std::string& ScratchFile() {
  static const std::string path = "/tmp/gpuspy-kineto-fuzz-" + std::to_string(getpid()) + ".json";
  return path;
}

// Read in pieces (kineto_reader.cc), a trace must come out exactly as read whole: the same
// events and counts, or the same error.
void CheckSame(const absl::StatusOr<gpuspy::importers::KinetoTrace>& whole,
               const absl::StatusOr<gpuspy::importers::KinetoTrace>& pieces) {
  if (whole.ok() != pieces.ok()) __builtin_trap();
  if (!whole.ok()) {
    if (whole.status() != pieces.status()) __builtin_trap();
    return;
  }
  if (!(whole->events == pieces->events) || whole->stats.trace_events != pieces->stats.trace_events ||
      whole->stats.imported != pieces->stats.imported || whole->stats.skipped != pieces->stats.skipped ||
      whole->strings.size() != pieces->strings.size()) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  // Pieces of 16-527 bytes (from the input's first byte): small enough that seeds of a few
  // kilobytes are cut many times.
  const size_t piece = size == 0 ? 64 : 16 + 2 * static_cast<size_t>(data[0]);
  if (!gzip) {
    const auto whole = gpuspy::importers::ParseKinetoTrace(bytes);
    Check(whole);
    CheckSame(whole, gpuspy::importers::ParseKinetoTrace(bytes, piece));
  }
  // The file path: always for gzip (the in-memory entry takes JSON only), else for every
  // eighth input (a file costs a write and a map; the JSON walk is the same).
  if (gzip || (size > 0 && data[size - 1] % 8 == 0)) {
    FILE* f = std::fopen(ScratchFile().c_str(), "wb");
    if (f == nullptr) return 0;
    const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    std::fclose(f);
    if (written) {
      const auto whole = gpuspy::importers::ReadKinetoTraceInPieces(ScratchFile(), 0);
      Check(whole);
      // The file path hands the text behind each piece back (an inflated one is lost and read
      // again if the pieces give up).
      CheckSame(whole, gpuspy::importers::ReadKinetoTraceInPieces(ScratchFile(), piece));
    }
  }
  return 0;
}
