// Element sizes of tensor dtypes, by the names PyTorch gives them (c10::ScalarType, as the
// profiler writes them into NCCL kernels' args: "Float", "BFloat16", ...). Shared by the Kineto
// importer (elements -> bytes) and the Chrome-trace exporter (bytes -> elements).
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuspy {

// Bytes per element of `dtype`; 0 when the name is not one PyTorch uses (or sub-byte).
uint32_t DtypeSize(std::string_view dtype);

}  // namespace gpuspy
