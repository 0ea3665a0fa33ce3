#include "analysis/kernel_classes.h"

namespace gpuspy::analysis {

KernelClass KernelClasses::Of(const StringTable& strings, StringRef name) {
  if (strings_ != &strings) {
    by_name_.clear();
    strings_ = &strings;
  }
  auto [it, fresh] = by_name_.try_emplace(name, KernelClass::kOther);
  if (fresh) it->second = ClassifyKernel(strings.Get(name));
  return it->second;
}

}  // namespace gpuspy::analysis
