// libFuzzer target: the Kineto trace importer on arbitrary bytes must return a status, never
// crash, hang or leak (run under ASan/UBSan by tests/fuzz/run.sh). Two ways in, as users have:
// the JSON in memory, and a file (mmap, and the gzip inflate when the bytes start with gzip's
// magic: seeds include gzip'd trace heads, whose mutations are truncated and damaged streams).
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (!gzip) Check(gpuspy::importers::ParseKinetoTrace(bytes));
  // The file path: always for gzip (the in-memory entry takes JSON only), else for every
  // eighth input (a file costs a write and a map; the JSON walk is the same).
  if (gzip || (size > 0 && data[size - 1] % 8 == 0)) {
    FILE* f = std::fopen(ScratchFile().c_str(), "wb");
    if (f == nullptr) return 0;
    const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    std::fclose(f);
    if (written) Check(gpuspy::importers::ReadKinetoTrace(ScratchFile()));
  }
  return 0;
}
