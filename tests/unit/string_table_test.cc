#include "model/string_table.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace gpuspy {
namespace {

TEST(StringTable, InternReturnsSameRefForSameValue) {
  StringTable t;
  const StringRef a = t.Intern("ampere_sgemm_128x64_tn");
  const StringRef b = t.Intern("void at::native::vectorized_elementwise_kernel<4>");
  EXPECT_NE(a, 0u);
  EXPECT_NE(a, b);
  EXPECT_EQ(t.Intern("ampere_sgemm_128x64_tn"), a);
  EXPECT_EQ(t.Get(a), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(t.size(), 2u);
}

TEST(StringTable, EmptyStringIsRefZero) {
  StringTable t;
  EXPECT_EQ(t.Intern(""), 0u);
  EXPECT_EQ(t.Get(0), "");
  EXPECT_TRUE(t.Contains(0));
}

TEST(StringTable, DefineRejectsConflictingRedefinition) {
  StringTable t;
  ASSERT_TRUE(t.Define(7, "cudaLaunchKernel").ok());
  EXPECT_TRUE(t.Define(7, "cudaLaunchKernel").ok());
  EXPECT_EQ(t.Define(7, "cudaMemcpyAsync").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.Get(7), "cudaLaunchKernel");
  EXPECT_FALSE(t.Contains(8));
  EXPECT_EQ(t.Get(8), "");
}

TEST(StringTable, InternAfterDefineDoesNotReuseDefinedRefs) {
  StringTable t;
  ASSERT_TRUE(t.Define(1, "a").ok());
  ASSERT_TRUE(t.Define(3, "c").ok());
  const StringRef b = t.Intern("b");
  EXPECT_NE(b, 1u);
  EXPECT_NE(b, 3u);
  EXPECT_EQ(t.Intern("c"), 3u);
}

TEST(StringTable, CopyKeepsRefsAndValues) {
  StringTable t;
  const StringRef a = t.Intern("x");
  StringTable copy = t;
  EXPECT_EQ(copy.Get(a), "x");
  EXPECT_EQ(copy.Intern("x"), a);
  EXPECT_NE(copy.Intern("y"), a);
}

TEST(StringTable, RefsAnywhereInTheirRangeAreDefinedAndFoundInAnyOrder) {
  // Small refs are kept by index, large ones (a hostile or odd producer's) in a map: both work,
  // defined out of order, and the gaps between them stay undefined.
  StringTable t;
  const std::vector<std::pair<StringRef, std::string>> defs = {
      {4'000'000'000u, "far"}, {300'000, "past the dense refs"}, {5, "five"}, {262'143, "edge"}, {2, "two"}};
  for (const auto& [ref, value] : defs) ASSERT_TRUE(t.Define(ref, value).ok()) << ref;
  for (const auto& [ref, value] : defs) {
    EXPECT_EQ(t.Get(ref), value) << ref;
    EXPECT_TRUE(t.Contains(ref)) << ref;
    EXPECT_EQ(t.Find(value), ref);
  }
  for (StringRef absent : {3u, 6u, 262'142u, 262'144u, 299'999u, 3'999'999'999u}) {
    EXPECT_FALSE(t.Contains(absent)) << absent;
    EXPECT_EQ(t.Get(absent), "") << absent;
  }
  EXPECT_EQ(t.size(), defs.size());
  EXPECT_FALSE(t.Define(300'000, "other").ok());  // still a conflict up there
  const StringRef fresh = t.Intern("new");
  for (const auto& [ref, value] : defs) EXPECT_NE(fresh, ref);
  const StringTable copy = t;
  for (const auto& [ref, value] : defs) EXPECT_EQ(copy.Get(ref), value) << ref;
  EXPECT_EQ(copy.Get(fresh), "new");
}

}  // namespace
}  // namespace gpuspy
