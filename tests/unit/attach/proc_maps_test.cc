#include "client/attach/proc_maps.h"

#include <dlfcn.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace gpuspy::attach {
namespace {

constexpr char kMaps[] =
    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234 /usr/bin/python3.11\n"
    "7f1a20000000-7f1a20028000 r--p 00000000 08:01 777 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f1a20028000-7f1a201bd000 r-xp 00028000 08:01 777 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f1a201bd000-7f1a20215000 r--p 001bd000 08:01 777 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f1a20300000-7f1a20400000 rw-p 00000000 00:00 0 \n"
    "7f1a20500000-7f1a20501000 r-xp 00000000 08:01 99 /opt/my libs/libcupti.so.13 (deleted)\n"
    "garbage line\n"
    "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n";

TEST(ProcMapsTest, ParsesEveryWellFormedLineAndSkipsTheRest) {
  std::vector<Mapping> maps = ParseMaps(kMaps);
  ASSERT_EQ(maps.size(), 7u);
  EXPECT_EQ(maps[2].start, 0x7f1a20028000u);
  EXPECT_EQ(maps[2].perms, "r-xp");
  EXPECT_EQ(maps[2].offset, 0x28000u);
  EXPECT_EQ(maps[2].inode, 777u);
  EXPECT_EQ(maps[3].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(maps[4].path, "");
  EXPECT_EQ(maps[5].path, "/opt/my libs/libcupti.so.13 (deleted)");
  EXPECT_EQ(maps[6].path, "[stack]");
}

TEST(ProcMapsTest, FindsALibrarysBaseAndTextByItsFileName) {
  std::vector<Mapping> maps = ParseMaps(kMaps);
  std::optional<LoadedObject> libc = FindObject(maps, "libc.so.6");
  ASSERT_TRUE(libc.has_value());
  EXPECT_EQ(libc->base, 0x7f1a20000000u);
  EXPECT_EQ(libc->text_start, 0x7f1a20028000u);
  EXPECT_EQ(libc->text_end, 0x7f1a201bd000u);
  EXPECT_TRUE(InText(*libc, 0x7f1a20100000u));
  EXPECT_FALSE(InText(*libc, 0x7f1a201bd000u));  // read-only data after the text
  EXPECT_FALSE(FindObject(maps, "libcuda.so").has_value());
  // A prefix matches the file name, not a directory on the way to it.
  EXPECT_FALSE(FindObject(maps, "x86_64").has_value());
}

TEST(ProcMapsTest, AgreesWithTheLoaderAboutThisProcessesLibc) {
  absl::StatusOr<std::vector<Mapping>> maps = ReadMaps(getpid());
  ASSERT_TRUE(maps.ok()) << maps.status();
  std::optional<LoadedObject> libc = FindObject(*maps, "libc.so.6");
  ASSERT_TRUE(libc.has_value());
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&getpid), &info), 0);
  EXPECT_EQ(reinterpret_cast<uint64_t>(info.dli_fbase), libc->base);
  EXPECT_TRUE(InText(*libc, reinterpret_cast<uint64_t>(&getpid)));
}

TEST(ProcMapsTest, AMissingProcessIsNotFound) {
  EXPECT_EQ(ReadMaps(0x7ffffff0).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gpuspy::attach
