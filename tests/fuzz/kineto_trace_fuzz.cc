// libFuzzer target: the Kineto trace importer on arbitrary bytes must return a status, never
// crash, hang or leak (run under ASan/UBSan by tests/fuzz/run.sh).
#include <cstddef>
#include <cstdint>
#include <string>

#include "importers/kineto/kineto_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto trace = gpuspy::importers::ParseKinetoTrace(std::string(reinterpret_cast<const char*>(data), size));
  if (trace.ok()) {
    // Whatever was accepted must be internally consistent.
    for (const auto& k : trace->events.kernels) {
      if (k.end_ns < k.start_ns) __builtin_trap();
    }
  }
  return 0;
}
