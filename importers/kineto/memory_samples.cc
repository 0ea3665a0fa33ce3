#include "importers/kineto/memory_samples.h"

#include "absl/strings/numbers.h"

namespace gpuspy::importers {
namespace {

// c10::DeviceType's CUDA; PyTorch writes the enum's value in "Device Type".
constexpr int64_t kCudaDeviceType = 1;

bool IntArg(ArgLookup args, const char* key, int64_t* out) {
  const std::string_view* v = args(key);
  return v != nullptr && absl::SimpleAtoi(absl::string_view(v->data(), v->size()), out);
}

}  // namespace

std::optional<MemoryPoolEvent> AllocatorSample(int64_t timestamp_ns,
                                               ArgLookup args,
                                               std::string* skip_reason) {
  int64_t device_type = -1, device = 0, reserved = 0, allocated = 0;
  if (!IntArg(args, "Device Type", &device_type) || device_type != kCudaDeviceType) {
    *skip_reason = "[memory] not on a CUDA device";
    return std::nullopt;
  }
  if (!IntArg(args, "Total Reserved", &reserved) || !IntArg(args, "Total Allocated", &allocated) ||
      reserved < 0 || allocated < 0) {
    *skip_reason = "[memory] without allocator totals";
    return std::nullopt;
  }
  IntArg(args, "Device Id", &device);
  MemoryPoolEvent p;
  p.timestamp_ns = timestamp_ns;
  p.device_id = device >= 0 ? static_cast<uint32_t>(device) : 0;
  p.op = PoolOpKind::kUsage;
  p.size = static_cast<uint64_t>(reserved);
  p.utilized_bytes = static_cast<uint64_t>(allocated);
  return p;
}

}  // namespace gpuspy::importers
