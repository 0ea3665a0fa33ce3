#include "analysis/api_classifier.h"

#include <array>
#include <utility>

#include "absl/strings/match.h"

namespace gpuspy::analysis {
namespace {

constexpr std::array<absl::string_view, 3> kLaunchPrefixes = {"cudaLaunch", "__cudaLaunch",
                                                              "cuLaunch"};
constexpr std::array<absl::string_view, 2> kGraphLaunch = {"cudaGraphLaunch", "cuGraphLaunch"};

// Exact names (version suffixes such as _v2 / _v3020 / _ptsz are stripped before lookup).
constexpr std::array<absl::string_view, 20> kBlocking = {
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
    "cudaThreadSynchronize", "cuCtxSynchronize",      "cuStreamSynchronize",
    "cuEventSynchronize",    "cudaMemcpy",            "cudaMemcpy2D",
    "cudaMemcpy3D",          "cudaMemcpyToSymbol",    "cudaMemcpyFromSymbol",
    "cudaMemset",            "cudaFree",              "cudaFreeHost",
    "cuMemFree",             "cuMemcpyDtoH",          "cuMemcpyHtoD",
    "cuMemcpy",              "cudaMemcpyPeer"};

absl::string_view StripPerThread(absl::string_view name) {
  for (absl::string_view suffix : {"_ptsz", "_ptds"}) {
    if (absl::EndsWith(name, suffix)) name.remove_suffix(suffix.size());
  }
  return name;
}

// The suffixes come in either order: CUPTI's runtime names put the per-thread marker first
// ("cudaStreamSynchronize_ptsz_v7000"), the driver's the version ("cuMemcpyDtoH_v2_ptds").
absl::string_view StripVersion(absl::string_view name) {
  name = StripPerThread(name);
  // "_v2", "_v3020", "_v13000": an underscore, a 'v' and digits at the end.
  size_t pos = name.rfind("_v");
  if (pos != absl::string_view::npos && pos + 2 < name.size()) {
    bool digits = true;
    for (size_t i = pos + 2; i < name.size(); ++i) digits &= name[i] >= '0' && name[i] <= '9';
    if (digits) name = name.substr(0, pos);
  }
  return StripPerThread(name);
}

constexpr std::array<absl::string_view, 5> kContextCalls = {"cuInit", "cuCtxCreate", "cuDevicePrimaryCtx",
                                                           "cudaSetDevice", "cudaInitDevice"};
constexpr std::array<absl::string_view, 4> kModuleCalls = {"cuModuleLoad", "cuLibraryLoad", "cuLinkComplete",
                                                          "cudaFuncGetAttributes"};
constexpr std::array<absl::string_view, 9> kAllocationCalls = {
    "cudaMalloc", "cudaFree", "cuMemAlloc", "cuMemFree", "cudaHostAlloc", "cuMemHostAlloc",
    "cudaHostRegister", "cuMemCreate", "cuMemMap"};
constexpr std::array<absl::string_view, 4> kStreamCalls = {"cudaStreamCreate", "cuStreamCreate",
                                                          "cudaEventCreate", "cuEventCreate"};

template <size_t N>
bool StartsWithAny(absl::string_view name, const std::array<absl::string_view, N>& prefixes) {
  for (absl::string_view p : prefixes) {
    if (absl::StartsWith(name, p)) return true;
  }
  return false;
}

// HIP names whose CUDA twin is not "cuda" + the rest: the module (driver-level) launches, AMD's
// extension launches, the pinned host allocation.
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kHipDriverNames = {{
    {"hipExtLaunchKernel", "cudaLaunchKernel"},
    {"hipModuleLaunchKernel", "cuLaunchKernel"},
    {"hipExtModuleLaunchKernel", "cuLaunchKernel"},
    {"hipModuleLaunchCooperativeKernel", "cuLaunchCooperativeKernel"},
    {"hipHostMalloc", "cudaHostAlloc"},
}};

}  // namespace

CudaApiName::CudaApiName(std::string_view name) : view_(name) {
  if (!name.starts_with("hip")) return;
  for (const auto& [hip, cuda] : kHipDriverNames) {
    if (name.starts_with(hip)) {
      owned_ = std::string(cuda) + std::string(name.substr(hip.size()));
      view_ = owned_;
      return;
    }
  }
  owned_ = "cuda" + std::string(name.substr(3));  // hipLaunchKernel -> cudaLaunchKernel
  view_ = owned_;
}

bool IsFreeApi(std::string_view raw) {
  const CudaApiName cuda(raw);
  const std::string_view name = cuda.view();
  return name.starts_with("cudaFree") || name.starts_with("cuMemFree");
}

bool IsDeviceAllocatorApi(std::string_view raw) {
  const CudaApiName cuda(raw);  // hipMalloc/hipFree too
  const std::string_view name = cuda.view();
  for (std::string_view p : {"cudaMalloc", "cudaFree", "cuMemAlloc", "cuMemFree"}) {
    if (name.starts_with(p)) return name.find("Host") == std::string_view::npos;
  }
  return false;
}

DriverWork DriverWorkOf(std::string_view raw, int64_t duration_ns) {
  const CudaApiName cuda(raw);
  const std::string_view std_name = cuda.view();
  const absl::string_view name(std_name.data(), std_name.size());
  if (StartsWithAny(name, kContextCalls)) return DriverWork::kContextCreation;
  // A launch that takes milliseconds loads its kernel's module first (idle_attribution.h).
  if (StartsWithAny(name, kModuleCalls) || IsLaunchApi(std_name)) return DriverWork::kModuleLoading;
  // cudaFree(0) is how libraries (cuDNN, NCCL) initialise CUDA: a free that takes as long as a
  // context creation, with nothing on the GPU to wait for, is that.
  if (IsFreeApi(std_name) && duration_ns >= kContextCreationNs) return DriverWork::kContextCreation;
  if (StartsWithAny(name, kAllocationCalls)) return DriverWork::kAllocation;
  if (StartsWithAny(name, kStreamCalls)) return DriverWork::kStreamCreation;
  return duration_ns >= kContextCreationNs ? DriverWork::kContextCreation : DriverWork::kOther;
}

const char* Describe(DriverWork work) {
  switch (work) {
    case DriverWork::kContextCreation: return "CUDA context or library initialisation";
    case DriverWork::kModuleLoading: return "module loading (lazy loading or JIT)";
    case DriverWork::kAllocation: return "memory allocation by the driver";
    case DriverWork::kStreamCreation: return "stream/event creation";
    case DriverWork::kOther: return "driver work";
  }
  return "driver work";
}

bool IsStartup(DriverWork work, int64_t duration_ns) {
  return work == DriverWork::kContextCreation || work == DriverWork::kModuleLoading ||
         duration_ns >= kContextCreationNs;
}

bool IsLaunchApi(std::string_view raw) {
  const CudaApiName cuda(raw);
  const absl::string_view name(cuda.view().data(), cuda.view().size());
  for (absl::string_view p : kLaunchPrefixes) {
    if (absl::StartsWith(name, p)) return true;
  }
  for (absl::string_view g : kGraphLaunch) {
    if (absl::StartsWith(name, g)) return true;
  }
  return false;
}

bool IsBlockingApi(std::string_view raw) {
  const CudaApiName cuda(raw);
  const absl::string_view name(cuda.view().data(), cuda.view().size());
  const absl::string_view base = StripVersion(name);
  for (absl::string_view b : kBlocking) {
    if (base == b) return true;
  }
  return false;
}

}  // namespace gpuspy::analysis
