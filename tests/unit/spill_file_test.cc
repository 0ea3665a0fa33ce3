#include "inject/core/spill_file.h"

#include <gtest/gtest.h>

#include <fstream>

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

TEST(SpillFile, UnwritableDirectoryIsAnErrorNotACrash) {
  SpillFile spill("/proc/gpuspy-cannot-write-here/p.spill", 1 << 20);
  absl::Status st = spill.Append("x");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/proc/gpuspy-cannot-write-here"), std::string::npos);
}

}  // namespace
}  // namespace gpuspy::inject
