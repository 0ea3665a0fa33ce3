#include "importers/kineto/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace gpuspy::importers {

size_t AdviseHugePages(const void* data, size_t bytes) {
  const uintptr_t from = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (from + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t last = (from + bytes) & ~(kHugePageBytes - 1);
  if (data == nullptr || last <= first) return 0;
  if (madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) != 0) return 0;
  return last - first;
}

}  // namespace gpuspy::importers
