// ApiNameMemo: a rule's answer per name, worked out once per distinct name.
#include "analysis/api_name_memo.h"

#include <gtest/gtest.h>

#include <string_view>

#include "analysis/api_classifier.h"

namespace gpuspy::analysis {
namespace {

int g_asked = 0;
bool CountingIsLaunch(std::string_view name) {
  ++g_asked;
  return IsLaunchApi(name);
}

TEST(ApiNameMemo, AnswersAsTheRuleDoesAndAsksItOncePerName) {
  StringTable strings;
  const StringRef launch = strings.Intern("cudaLaunchKernel");
  const StringRef hip_launch = strings.Intern("hipModuleLaunchKernel");
  const StringRef sync = strings.Intern("cudaStreamSynchronize");
  g_asked = 0;
  ApiNameMemo is_launch(strings, CountingIsLaunch);
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(is_launch(launch));
    EXPECT_TRUE(is_launch(hip_launch));
    EXPECT_FALSE(is_launch(sync));
  }
  EXPECT_EQ(g_asked, 3);
  // The empty name (ref 0) is a name like any other.
  EXPECT_FALSE(is_launch(0));
  EXPECT_EQ(g_asked, 4);
}

}  // namespace
}  // namespace gpuspy::analysis
