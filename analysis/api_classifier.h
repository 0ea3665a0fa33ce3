// What a CUDA runtime/driver API call does to the host thread, by name. Names, not cbids, so the
// same rules hold for live captures and imported traces.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuspy::analysis {

// An API name as the rules below read it. ROCm's HIP runtime mirrors CUDA's one to one (Kineto on
// ROCm records hipLaunchKernel, hipMemcpyAsync, hipDeviceSynchronize): a HIP name is read as its
// CUDA twin ("hipLaunchKernel" -> "cudaLaunchKernel", "hipModuleLaunchKernel" ->
// "cuLaunchKernel"), so a ROCm trace's launches, syncs, copies and allocations are what they
// are. Every other name is itself (no copy).
class CudaApiName {
 public:
  explicit CudaApiName(std::string_view name);
  // view() may point into this object: it is read where it is made, never copied.
  CudaApiName(const CudaApiName&) = delete;
  CudaApiName& operator=(const CudaApiName&) = delete;
  std::string_view view() const { return view_; }

 private:
  std::string owned_;
  std::string_view view_;
};

// cudaLaunchKernel, __cudaLaunchKernel_v13000, cudaLaunchKernelExC, cuLaunchKernel(Ex),
// cudaGraphLaunch, cudaLaunchCooperativeKernel, ... (and their HIP twins, as every rule here).
bool IsLaunchApi(std::string_view name);

// Calls that block the host until GPU work finishes: explicit syncs (stream/device/event/
// context), synchronous copies and memsets, and cudaFree/cuMemFree (which synchronize the device).
bool IsBlockingApi(std::string_view name);

// cudaFree, cudaFreeHost, cudaFreeAsync, cuMemFree...: frees, which synchronize the device.
bool IsFreeApi(std::string_view name);

// cudaMalloc/cudaFree/cuMemAlloc/cuMemFree and their variants on device memory (not the *Host
// ones): the calls the caching allocator makes when it cannot reuse a block.
bool IsDeviceAllocatorApi(std::string_view name);

// What the driver does inside a call that keeps the host with nothing on the GPU to wait for
// (idle_attribution.h, cuda_call), by name and, for calls that only query, by length: a query
// that takes kContextCreationNs creates the CUDA context (a process's first CUDA call does).
enum class DriverWork { kContextCreation, kModuleLoading, kAllocation, kStreamCreation, kOther };
inline constexpr int64_t kContextCreationNs = 20'000'000;
DriverWork DriverWorkOf(std::string_view name, int64_t duration_ns);
// "CUDA context creation", "module loading (lazy loading or JIT)", ...
const char* Describe(DriverWork work);
// Start-up: context creation and module loading (paid once per process, or per new kernel),
// and any driver work that takes as long as a context creation (no steady step waits that long
// in the driver: the allocator's first segments, a library's initialisation).
bool IsStartup(DriverWork work, int64_t duration_ns);

}  // namespace gpuspy::analysis
