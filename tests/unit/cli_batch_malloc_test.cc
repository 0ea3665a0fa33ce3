// KeepFreedMemoryForReuse: after it, a block of a few MiB comes from the heap, not from a mapping
// of its own, and stays in the heap when freed, ready for the next one (no fresh pages to fault).
#include "viewer/cli/batch_malloc.h"

#include <malloc.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace gpuspy::cli {
namespace {

constexpr size_t kBlockBytes = 8 << 20;  // past glibc's default mmap threshold (128 KiB)

// ASan and TSan replace glibc's malloc (mallopt does nothing there, mallinfo2 says zeros). gcc
// says so with __SANITIZE_*__, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerMalloc = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitizerMalloc = true;
#else
constexpr bool kSanitizerMalloc = false;
#endif
#else
constexpr bool kSanitizerMalloc = false;
#endif

TEST(BatchMalloc, AFreedBlockOfSomeMiBStaysInTheHeapForTheNextOne) {
  if (kSanitizerMalloc) {
    GTEST_SKIP() << "ASan and TSan replace glibc's malloc: mallopt and mallinfo2 say nothing there";
  }
  KeepFreedMemoryForReuse();
  const struct mallinfo2 before = mallinfo2();
  void* block = std::malloc(kBlockBytes);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBlockBytes);
  const struct mallinfo2 holding = mallinfo2();
  EXPECT_EQ(holding.hblks, before.hblks) << "the block has a mapping of its own";
  std::free(block);
  const struct mallinfo2 after = mallinfo2();
  EXPECT_GE(after.fordblks, kBlockBytes) << "the freed block went back to the system";
  // And the next block of that size reuses it: the heap does not grow.
  void* again = std::malloc(kBlockBytes);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(mallinfo2().arena, after.arena);
  std::free(again);
}

}  // namespace
}  // namespace gpuspy::cli
