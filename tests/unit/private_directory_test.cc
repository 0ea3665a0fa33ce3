#include "client/spill/private_directory.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "client/spill/spill_file.h"
#include "tests/support/subprocess.h"

namespace gpuspy::inject {
namespace {

constexpr uid_t kOtherUid = 65534;  // nobody

mode_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// What squatting /tmp/gpuspy-<uid> looks like: another user's world-writable directory.
std::string Squatted(const std::string& parent) {
  const std::string squatted = parent + "/gpuspy-1000";
  EXPECT_EQ(mkdir(squatted.c_str(), 0777), 0);
  EXPECT_EQ(chmod(squatted.c_str(), 0777), 0);
  EXPECT_EQ(chown(squatted.c_str(), kOtherUid, kOtherUid), 0);
  return squatted;
}

// Planting files as another user needs root (CI runs as root); elsewhere those cases skip.
#define REQUIRE_ROOT() \
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create files owned by another user"

TEST(PrivateDirectory, CreatesMissingDirectoriesPrivateToUs) {
  testing::TempDir dir;
  const std::string spill = dir.path() + "/a/b/spill";
  ASSERT_TRUE(EnsurePrivateDirectory(spill).ok());
  EXPECT_EQ(ModeOf(spill), 0700u);
}

TEST(PrivateDirectory, TightensAnOpenDirectoryOfOurs) {
  testing::TempDir dir;
  const std::string spill = dir.path() + "/spill";
  ASSERT_EQ(mkdir(spill.c_str(), 0777), 0);
  ASSERT_EQ(chmod(spill.c_str(), 0777), 0);
  ASSERT_TRUE(EnsurePrivateDirectory(spill).ok());
  EXPECT_EQ(ModeOf(spill), 0700u);
}

TEST(PrivateDirectory, RefusesAFileInThePlaceOfTheDirectory) {
  testing::TempDir dir;
  const std::string spill = dir.path() + "/spill";
  std::ofstream(spill) << "x";
  EXPECT_FALSE(EnsurePrivateDirectory(spill).ok());
}

TEST(PrivateDirectory, RefusesADirectoryAnotherUserCreatedFirst) {
  REQUIRE_ROOT();
  testing::TempDir dir;
  const std::string squatted = Squatted(dir.path());
  absl::Status st = EnsurePrivateDirectory(squatted);
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied) << st;
  EXPECT_NE(st.message().find("owner uid 65534"), absl::string_view::npos) << st;
  // ... and a directory we would create inside it, which its owner could rename away.
  st = EnsurePrivateDirectory(squatted + "/spill");
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied) << st;
  EXPECT_NE(st.message().find("ancestor"), absl::string_view::npos) << st;
}

TEST(PrivateDirectory, AcceptsAStickyOrClosedAncestorOfAnotherUser) {
  REQUIRE_ROOT();
  testing::TempDir dir;
  const std::string sticky = dir.path() + "/sticky";  // like /tmp, owned by someone else
  ASSERT_EQ(mkdir(sticky.c_str(), 0777), 0);
  ASSERT_EQ(chmod(sticky.c_str(), 01777), 0);
  ASSERT_EQ(chown(sticky.c_str(), kOtherUid, kOtherUid), 0);
  EXPECT_TRUE(EnsurePrivateDirectory(sticky + "/mine").ok());
  const std::string closed = dir.path() + "/closed";  // e.g. a project dir only its owner writes
  ASSERT_EQ(mkdir(closed.c_str(), 0755), 0);
  const std::string mine = closed + "/mine";
  ASSERT_EQ(mkdir(mine.c_str(), 0700), 0);
  ASSERT_EQ(chown(closed.c_str(), kOtherUid, kOtherUid), 0);
  EXPECT_TRUE(EnsurePrivateDirectory(mine).ok());
}

TEST(PrivateDirectory, FollowsOurOwnSymlinkButNotOnePlantedByAnotherUser) {
  testing::TempDir dir;
  const std::string real = dir.path() + "/real";
  ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
  const std::string ours = dir.path() + "/ours";
  ASSERT_EQ(symlink(real.c_str(), ours.c_str()), 0);
  EXPECT_TRUE(EnsurePrivateDirectory(ours).ok());
  if (geteuid() != 0) return;
  const std::string planted = dir.path() + "/planted";
  ASSERT_EQ(symlink(real.c_str(), planted.c_str()), 0);
  ASSERT_EQ(lchown(planted.c_str(), kOtherUid, kOtherUid), 0);
  EXPECT_EQ(EnsurePrivateDirectory(planted).code(), absl::StatusCode::kPermissionDenied);
}

TEST(PrivateDirectory, SpillRefusesToWriteThroughALinkAtItsOwnPath) {
  testing::TempDir dir;
  const std::string victim = dir.path() + "/victim";
  std::ofstream(victim) << "precious";
  const std::string spill_dir = dir.path() + "/spill";
  ASSERT_TRUE(EnsurePrivateDirectory(spill_dir).ok());
  ASSERT_EQ(symlink(victim.c_str(), (spill_dir + "/p.spill").c_str()), 0);
  SpillFile spill(spill_dir + "/p.spill", 1 << 20);
  EXPECT_FALSE(spill.Append("batch").ok());
  std::ifstream in(victim);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "precious");
}

TEST(PrivateDirectory, SpillIntoASquattedDirectoryIsRefusedAndNothingIsWritten) {
  REQUIRE_ROOT();
  testing::TempDir dir;
  const std::string squatted = Squatted(dir.path());
  SpillFile spill(squatted + "/spill/p.spill", 1 << 20);
  EXPECT_EQ(spill.Append("batch").code(), absl::StatusCode::kPermissionDenied);
  struct stat st;
  EXPECT_NE(stat((squatted + "/spill/p.spill").c_str(), &st), 0);
}

}  // namespace
}  // namespace gpuspy::inject
