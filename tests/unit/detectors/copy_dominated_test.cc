// copy_dominated: copies no kernel overlaps take at least kMinExposedCopyShare (15 %) of the step.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/detectors/detectors.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::DetectorStep;
using testing::Evidence;
using ::testing::HasSubstr;
constexpr int64_t us = 1'000;

// 1000 µs: a host-to-device copy of `copy_us`, then compute on the same stream (no overlap).
DetectorStep CopyThenCompute(int64_t copy_us, MemoryKind host = MemoryKind::kPinned) {
  DetectorStep s;
  s.Copy(CopyKind::kHtoD, copy_us * us, 64ull << 20, host).Then(testing::kTcGemm, (1'000 - copy_us) * us);
  return s;
}

TEST(CopyDominated, AnExposedPageableCopyFiresAndAsksForPinnedMemory) {
  DetectorStep s = CopyThenCompute(300, MemoryKind::kPageable);
  const auto f = s.Run(&DetectCopyDominated);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->detector(), v1::copy_dominated);
  EXPECT_EQ(f->lost_ns(), 300 * us);
  EXPECT_EQ(f->severity(), v1::critical);  // 30 % of the step
  EXPECT_EQ(Evidence(*f, "pageable_bytes"), "64.0 MiB");
  EXPECT_THAT(f->fix_hint(), HasSubstr("pin_memory=True"));
}

// Where the copies come from: each call site with what it moved, and through which memory.
TEST(CopyDominated, CallSitesCarryTheBytesTheyMovedAndWhetherPageable) {
  DetectorStep s;
  s.Copy(CopyKind::kHtoD, 200 * us, 64ull << 20, MemoryKind::kPageable)
      .IssuedBy("cudaMemcpyAsync", 0, 210 * us, "train.py:88 batch.to(device)");
  s.Copy(CopyKind::kHtoD, 100 * us, 32ull << 20, MemoryKind::kPageable)
      .IssuedBy("cudaMemcpyAsync", 210 * us, 310 * us, "train.py:88 batch.to(device)");
  s.Copy(CopyKind::kDtoH, 50 * us, 4ull << 20, MemoryKind::kPinned)
      .IssuedBy("cudaMemcpyAsync", 310 * us, 360 * us, "train.py:97 loss.cpu()");
  s.Then(testing::kTcGemm, 640 * us);
  const auto f = s.Run(&DetectCopyDominated);
  ASSERT_TRUE(f.has_value());
  std::vector<std::string> sites;
  for (const auto& e : f->evidence()) {
    if (e.key() == "copy_site") sites.push_back(e.value());
  }
  EXPECT_THAT(sites, ::testing::ElementsAre("train.py:88 batch.to(device) x2 (0.3 ms, 96.0 MiB, all pageable)",
                                            "train.py:97 loss.cpu() x1 (0.1 ms, 4.0 MiB, pinned)"));
}

// The line to change is the one that copies the most, not the one that copies most often: a
// prefetch helper's one 64 MiB pageable upload outranks four small reads of values, in the
// evidence's order and in the hint.
TEST(CopyDominated, TheLineThatCopiesTheMostBytesLeadsAndStartsTheHint) {
  DetectorStep s;
  s.Copy(CopyKind::kHtoD, 300 * us, 64ull << 20, MemoryKind::kPageable)
      .IssuedBy("cudaMemcpyAsync", 0, 310 * us, "prefetch.py:31 preload \u2190 train.py:70 main");
  int64_t t = 310 * us;
  for (const char* site : {"train.py:90 log", "train.py:91 log", "train.py:92 log", "train.py:93 log"}) {
    for (int i = 0; i < 2; ++i, t += 10 * us) {
      s.Copy(CopyKind::kDtoH, 5 * us, 4, MemoryKind::kPageable).IssuedBy("cudaMemcpyAsync", t, t + 8 * us, site);
    }
  }
  s.Then(testing::kTcGemm, 600 * us);
  const auto f = s.Run(&DetectCopyDominated);
  ASSERT_TRUE(f.has_value());
  std::vector<std::string> sites;
  for (const auto& e : f->evidence()) {
    if (e.key() == "copy_site") sites.push_back(e.call_site());
  }
  ASSERT_EQ(sites.size(), 3u);
  EXPECT_EQ(sites[0], "prefetch.py:31 preload \u2190 train.py:70 main");
  EXPECT_THAT(f->fix_hint(), ::testing::StartsWith("prefetch.py:31 preload \u2190 train.py:70 main copies 64.0 MiB "
                                                    "in this step (64.0 MiB pageable)"));
}

TEST(CopyDominated, JustUnderTheExposedShareDoesNotFire) {
  EXPECT_FALSE(CopyThenCompute(149).Run(&DetectCopyDominated).has_value());  // 14.9 %
  EXPECT_TRUE(CopyThenCompute(150).Run(&DetectCopyDominated).has_value());   // 15 %
}

}  // namespace
}  // namespace gpuspy::analysis
