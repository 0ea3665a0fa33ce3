// Element sizes of tensor dtypes, by the names PyTorch gives them (c10::ScalarType, as the
// profiler writes them into NCCL kernels' args: "Float", "BFloat16", ...). Shared by the Kineto
// importer (elements -> bytes) and the Chrome-trace exporter (bytes -> elements).
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuspy {

// Bytes per element of `dtype`; 0 when the name is not one PyTorch uses (or sub-byte). Both
// spellings: c10::ScalarType's ("Float", "BFloat16") and the profiler's "Input type" arg's C++
// names ("float", "c10::BFloat16").
uint32_t DtypeSize(std::string_view dtype);

// "fp32", "bf16", "fp16", "fp8", "fp64", "int8", ... for either spelling; other names as given.
std::string_view DtypeShortName(std::string_view dtype);

}  // namespace gpuspy
