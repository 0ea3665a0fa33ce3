#include "viewer/cli/batch_malloc.h"

#include <cstddef>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace gpuspy::cli {
namespace {

// glibc's own ceiling for the mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX): larger
// blocks (the event columns) keep their own mappings, and go back to the system when freed.
constexpr int kHeapBlocksUpToBytes = 32 << 20;
// Freed memory at the top of the heap is returned only past this: never, in a batch run.
constexpr int kTrimAboveBytes = 1 << 30;
// The heap grows by this much more than asked: address space, touched only as it is used.
constexpr int kGrowHeapByBytes = 64 << 20;

}  // namespace

void KeepFreedMemoryForReuse() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, kHeapBlocksUpToBytes);
  mallopt(M_TRIM_THRESHOLD, kTrimAboveBytes);
  mallopt(M_TOP_PAD, kGrowHeapByBytes);
#endif
}

}  // namespace gpuspy::cli
