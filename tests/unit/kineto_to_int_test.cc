// ToInt: the integer reading every numeric field of a trace goes through.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "importers/kineto/kineto_mapping.h"

namespace gpuspy::importers {
namespace {

// Integers are read without a per-digit check up to 18 digits and by std::from_chars past that:
// both sides of the line, and int64's own ends, read as std::from_chars reads them whole.
TEST(KinetoToInt, ReadsWhatFromCharsReadsAcrossTheUncheckedLength) {
  const std::pair<const char*, int64_t> good[] = {
      {"0", 0},
      {"-0", 0},
      {"007", 7},
      {"999999999999999999", 999999999999999999},     // 18 digits
      {"-999999999999999999", -999999999999999999},   // 18 digits and a sign
      {"1000000000000000000", 1000000000000000000},   // 19
      {"9223372036854775807", INT64_MAX},
      {"-9223372036854775808", INT64_MIN},
      {"7.0", 7},  // a whole double (the absl path)
  };
  for (const auto& [text, want] : good) {
    int64_t n = 42;
    EXPECT_TRUE(ToInt(text, &n)) << text;
    EXPECT_EQ(n, want) << text;
  }
  for (const char* bad : {"", "-", "--5", "12a", "99999999999999999999", "1.5", "abc"}) {
    int64_t n = 42;
    EXPECT_FALSE(ToInt(bad, &n)) << bad;
    EXPECT_EQ(n, 42) << bad;  // unchanged on failure
  }
}

}  // namespace
}  // namespace gpuspy::importers
