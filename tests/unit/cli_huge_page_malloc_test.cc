// Which command lines run again with malloc's huge pages (viewer/cli/huge_page_malloc.h): the
// offline commands only, found past the global options, and never over the user's own tunables.
#include "viewer/cli/huge_page_malloc.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuspy::cli {
namespace {

using Args = std::vector<std::string>;

TEST(HugePageMalloc, TheSubcommandIsFoundPastTheGlobalOptionsAndTheirValues) {
  EXPECT_EQ(SubcommandOf({"gpuspy", "analyze", "a.json"}), "analyze");
  EXPECT_EQ(SubcommandOf({"gpuspy", "--json", "analyze", "a.json"}), "analyze");
  EXPECT_EQ(SubcommandOf({"gpuspy", "--collector", "h:1", "--timeout", "3", "import", "a.json"}), "import");
  EXPECT_EQ(SubcommandOf({"gpuspy", "--collector=h:1", "diff", "a", "b"}), "diff");
  // A value that reads like a command is the option's, not the command.
  EXPECT_EQ(SubcommandOf({"gpuspy", "--token-file", "analyze", "report"}), "report");
  EXPECT_EQ(SubcommandOf({"gpuspy", "--json"}), "");
  EXPECT_EQ(SubcommandOf({"gpuspy"}), "");
}

TEST(HugePageMalloc, OnlyOfflineCommandsUnderMadviseWithoutTheUsersTunables) {
  const Args analyze = {"gpuspy", "analyze", "t.json.gz"};
  const uint64_t kBig = kMinHugePageInputBytes;
  EXPECT_TRUE(WantsHugePageMalloc(analyze, kBig, "madvise", nullptr, nullptr));
  EXPECT_TRUE(WantsHugePageMalloc({"gpuspy", "diff", "a", "b"}, kBig, "madvise", nullptr, nullptr));
  EXPECT_TRUE(WantsHugePageMalloc({"gpuspy", "import", "a"}, kBig, "madvise", nullptr, nullptr));
  // Near misses: files too small to be worth it; malloc has huge pages already, or never will; the user set tunables (not
  // overridden) or opted out; a command that talks to gpuspyd or starts the user's program (which
  // would inherit the setting).
  EXPECT_FALSE(WantsHugePageMalloc(analyze, kMinHugePageInputBytes - 1, "madvise", nullptr, nullptr))
      << "small files are not worth a second start";
  EXPECT_FALSE(WantsHugePageMalloc(analyze, kBig, "always", nullptr, nullptr));
  EXPECT_FALSE(WantsHugePageMalloc(analyze, kBig, "never", nullptr, nullptr));
  EXPECT_FALSE(WantsHugePageMalloc(analyze, kBig, "", nullptr, nullptr));
  EXPECT_FALSE(WantsHugePageMalloc(analyze, kBig, "madvise", "glibc.malloc.arena_max=2", nullptr));
  EXPECT_FALSE(WantsHugePageMalloc(analyze, kBig, "madvise", nullptr, "1"));
  EXPECT_FALSE(WantsHugePageMalloc({"gpuspy", "run", "--", "python", "analyze"}, kBig, "madvise", nullptr, nullptr));
  EXPECT_FALSE(WantsHugePageMalloc({"gpuspy", "report", "--job", "j"}, kBig, "madvise", nullptr, nullptr));
}

}  // namespace
}  // namespace gpuspy::cli
