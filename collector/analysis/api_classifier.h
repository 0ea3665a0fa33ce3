// What a CUDA runtime/driver API call does to the host thread, by name. Names, not cbids, so the
// same rules hold for live captures and imported traces.
#pragma once

#include <string_view>

namespace gpuspy::analysis {

// cudaLaunchKernel, __cudaLaunchKernel_v13000, cudaLaunchKernelExC, cuLaunchKernel(Ex),
// cudaGraphLaunch, cudaLaunchCooperativeKernel, ...
bool IsLaunchApi(std::string_view name);

// Calls that block the host until GPU work finishes: explicit syncs (stream/device/event/
// context), synchronous copies and memsets, and cudaFree/cuMemFree (which synchronize the device).
bool IsBlockingApi(std::string_view name);

}  // namespace gpuspy::analysis
