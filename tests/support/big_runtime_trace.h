// A Kineto trace of `n` runtime API calls (cudaLaunchKernel, 1 us each): large enough that
// importing it takes a while, so a test can interrupt the send (the import e2e tests).
#pragma once

#include <fstream>
#include <string>

namespace gpuspy::testing {

inline std::string WriteBigRuntimeTrace(const std::string& dir, int n) {
  const std::string path = dir + "/big.pt.trace.json";
  std::ofstream f(path);
  f << R"({"schemaVersion": 1, "traceEvents": [)";
  for (int i = 0; i < n; ++i) {
    f << (i == 0 ? "" : ",") << R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )"
      << 1'000'000 + 2 * i << R"(, "dur": 1, "args": {"cbid": 211, "correlation": )" << i + 1 << "}}";
  }
  f << "]}";
  return path;
}

}  // namespace gpuspy::testing
