// Huge pages for the memory a trace is read into (importers/kineto/huge_pages.h): only whole huge
// pages inside the range are advised, never the memory beside it.
#include "importers/kineto/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

namespace gpuspy::importers {
namespace {

// Whether this kernel has transparent huge pages at all (without them madvise refuses the hint).
bool KernelHasThp() { return std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled"); }

class HugePagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    area_ = mmap(nullptr, kArea, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(area_, MAP_FAILED);
  }
  void TearDown() override { munmap(area_, kArea); }
  // An address `offset` bytes past the first huge-page boundary of the area.
  char* At(size_t offset) const {
    const uintptr_t base = reinterpret_cast<uintptr_t>(area_);
    return reinterpret_cast<char*>((base + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes + offset);
  }
  static constexpr size_t kArea = 6 * kHugePageBytes;
  void* area_ = nullptr;
};

TEST_F(HugePagesTest, AdvisesTheWholeHugePagesInsideTheRange) {
  if (!KernelHasThp()) GTEST_SKIP() << "the kernel has no transparent huge pages";
  // From half a page in to one and a half pages before the end of four: pages 1 and 2.
  EXPECT_EQ(AdviseHugePages(At(kHugePageBytes / 2), 3 * kHugePageBytes), 2 * kHugePageBytes);
  // Exactly aligned: all of it.
  EXPECT_EQ(AdviseHugePages(At(0), 2 * kHugePageBytes), 2 * kHugePageBytes);
}

TEST_F(HugePagesTest, AdvisesNothingWithoutAWholeHugePage) {
  // Near miss: a huge page's worth of bytes that straddles a boundary holds no whole page.
  EXPECT_EQ(AdviseHugePages(At(1), kHugePageBytes), 0u);
  EXPECT_EQ(AdviseHugePages(At(0), kHugePageBytes - 1), 0u);
  EXPECT_EQ(AdviseHugePages(nullptr, 4 * kHugePageBytes), 0u);
}

TEST(HugePagesForVector, CoversTheReservedStorageNotOnlyTheElements) {
  if (!KernelHasThp()) GTEST_SKIP() << "the kernel has no transparent huge pages";
  std::vector<int64_t> v;
  v.reserve(4 * kHugePageBytes / sizeof(int64_t));  // one element in, 8 MiB reserved
  v.push_back(1);
  // malloc's mmap'd chunk starts 16 bytes into a page: three of its four huge pages are whole.
  EXPECT_GE(AdviseHugePagesFor(v), 3 * kHugePageBytes);
  EXPECT_EQ(v.front(), 1);
}

}  // namespace
}  // namespace gpuspy::importers
