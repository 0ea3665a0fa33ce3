#include "client/spill/spill_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace gpuspy::inject {
namespace {

TEST(SpillFile, AppendsAndReadsBackInOrder) {
  testing::TempDir dir;
  SpillFile spill(dir.path() + "/sub/p.spill", 1 << 20);
  EXPECT_TRUE(spill.empty());
  ASSERT_TRUE(spill.Append("first").ok());
  ASSERT_TRUE(spill.Append(std::string(1000, 'x')).ok());
  ASSERT_TRUE(spill.Append("").ok());
  auto all = spill.ReadAll();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0], "first");
  EXPECT_EQ((*all)[1], std::string(1000, 'x'));
  EXPECT_EQ((*all)[2], "");
  spill.Clear();
  EXPECT_TRUE(spill.empty());
  EXPECT_TRUE(spill.ReadAll()->empty());
}

TEST(SpillFile, RefusesBeyondItsBound) {
  testing::TempDir dir;
  SpillFile spill(dir.path() + "/p.spill", 100);
  ASSERT_TRUE(spill.Append(std::string(50, 'a')).ok());
  absl::Status st = spill.Append(std::string(50, 'b'));
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(spill.ReadAll()->size(), 1u);
}

TEST(SpillFile, TornTailIsIgnored) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/p.spill";
  SpillFile spill(path, 1 << 20);
  ASSERT_TRUE(spill.Append("good").ok());
  ASSERT_TRUE(spill.Append("also good").ok());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.write("XYZ", 3);  // damage the last record's payload
  }
  auto all = spill.ReadAll();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0], "good");
}

TEST(SpillFile, ReplayHandsOverEveryBatchInOrderAndRemovesTheFile) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/p.spill";
  SpillFile spill(path, 1 << 20);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(spill.Append("batch" + std::to_string(i)).ok());
  std::vector<std::string> got;
  auto r = spill.Replay([&](const std::string& b) {
    got.push_back(b);
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->delivered, 5u);
  EXPECT_EQ(r->kept, 0u);
  EXPECT_EQ(got, (std::vector<std::string>{"batch0", "batch1", "batch2", "batch3", "batch4"}));
  EXPECT_TRUE(spill.empty());
  EXPECT_FALSE(std::ifstream(path).good());
}

TEST(SpillFile, ReplayStoppedByAFailureKeepsTheRestInOrderAndResumesThere) {
  testing::TempDir dir;
  SpillFile spill(dir.path() + "/p.spill", 1 << 20);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(spill.Append("b" + std::to_string(i)).ok());
  std::vector<std::string> got;
  auto r = spill.Replay([&](const std::string& b) {
    if (b == "b2") return false;  // the collector went away again
    got.push_back(b);
    return true;
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->delivered, 2u);
  EXPECT_EQ(r->kept, 3u);
  EXPECT_FALSE(spill.empty());
  ASSERT_TRUE(spill.Append("b5").ok());  // spilled meanwhile: goes after the rest
  EXPECT_EQ(*spill.ReadAll(), (std::vector<std::string>{"b2", "b3", "b4", "b5"}));
  r = spill.Replay([&](const std::string& b) {
    got.push_back(b);
    return true;
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->delivered, 4u);
  EXPECT_EQ(got, (std::vector<std::string>{"b0", "b1", "b2", "b3", "b4", "b5"}));
  EXPECT_TRUE(spill.empty());
}

TEST(SpillFile, ReplayedHeadCountsAgainstTheBoundUntilTheSpillDrains) {
  testing::TempDir dir;
  // 20 bytes of preamble (no header) and 48 per record.
  SpillFile spill(dir.path() + "/p.spill", 140);
  ASSERT_TRUE(spill.Append(std::string(40, 'a')).ok());
  ASSERT_TRUE(spill.Append(std::string(40, 'b')).ok());
  ASSERT_TRUE(spill.Replay([](const std::string& b) { return b[0] == 'a'; }).ok());
  // 116 bytes on disk: the disk bound holds although only one batch is left to send.
  EXPECT_EQ(spill.Append(std::string(40, 'c')).code(), absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(spill.Replay([](const std::string&) { return true; }).ok());
  EXPECT_TRUE(spill.Append(std::string(40, 'c')).ok());
}

TEST(SpillFile, ReplayOfATornFileDeliversTheGoodPrefixAndDiscardsTheRest) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/p.spill";
  SpillFile spill(path, 1 << 20);
  ASSERT_TRUE(spill.Append("good").ok());
  ASSERT_TRUE(spill.Append("damaged").ok());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-2, std::ios::end);
    f.write("XY", 2);
  }
  std::vector<std::string> got;
  auto r = spill.Replay([&](const std::string& b) {
    got.push_back(b);
    return true;
  });
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->torn);
  EXPECT_EQ(got, std::vector<std::string>{"good"});
  EXPECT_TRUE(spill.empty());
}

TEST(SpillFile, UnwritableDirectoryIsAnErrorNotACrash) {
  SpillFile spill("/proc/gpuspy-cannot-write-here/p.spill", 1 << 20);
  absl::Status st = spill.Append("x");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/proc/gpuspy-cannot-write-here"), std::string::npos);
}

}  // namespace
}  // namespace gpuspy::inject
