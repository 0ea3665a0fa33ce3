#include "collector/analysis/api_classifier.h"

#include <array>

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

}  // namespace

bool IsLaunchApi(std::string_view std_name) {
  const absl::string_view name(std_name.data(), std_name.size());
  for (absl::string_view p : kLaunchPrefixes) {
    if (absl::StartsWith(name, p)) return true;
  }
  for (absl::string_view g : kGraphLaunch) {
    if (absl::StartsWith(name, g)) return true;
  }
  return false;
}

bool IsBlockingApi(std::string_view std_name) {
  const absl::string_view name(std_name.data(), std_name.size());
  const absl::string_view base = StripVersion(name);
  for (absl::string_view b : kBlocking) {
    if (base == b) return true;
  }
  return false;
}

}  // namespace gpuspy::analysis
