// What the gpuspy CLI prints: bare numbers for table cells, human sizes and durations, relative
// times, and a column-aligned table whose numeric columns line up on the right.
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "model/units.h"
#include "viewer/cli/format.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

TEST(CliFormat, MillisecondsAreBareWithTwoDecimals) {
  EXPECT_EQ(Ms(0), "0.00");
  EXPECT_EQ(Ms(12'345'678), "12.35");
  EXPECT_EQ(Ms(1'500), "0.00");
  EXPECT_EQ(Ms(2 * kSecond), "2000.00");
}

TEST(CliFormat, PercentOfNothingIsADash) {
  EXPECT_EQ(Percent(3, 8), "37.5%");
  EXPECT_EQ(Percent(8, 8), "100.0%");
  EXPECT_EQ(Percent(0, 8), "0.0%");
  EXPECT_EQ(Percent(5, 0), "-");
  EXPECT_EQ(Percent(5, -1), "-");
}

TEST(CliFormat, AgoPicksTheLargestSensibleUnit) {
  const int64_t now = 1'700'000'000 * kSecond;
  EXPECT_EQ(Ago(now, now), "0s ago");
  EXPECT_EQ(Ago(now - 3 * kSecond, now), "3s ago");
  EXPECT_EQ(Ago(now - 119 * kSecond, now), "119s ago");
  EXPECT_EQ(Ago(now - 5 * 60 * kSecond, now), "5m ago");
  EXPECT_EQ(Ago(now - 2 * 3600 * kSecond, now), "2h ago");
  EXPECT_EQ(Ago(now - 3 * 86400 * kSecond, now), "3d ago");
  // Clock skew between gpuspyd and this machine must not print "-3s ago".
  EXPECT_EQ(Ago(now + 3 * kSecond, now), "now");
  EXPECT_EQ(Ago(0, now), "-");  // never seen
}

TEST(CliFormat, BytesUseBinaryUnits) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(4), "4 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(4096), "4.0 KiB");
  EXPECT_EQ(FormatBytes(256ull << 20), "256.0 MiB");
  EXPECT_EQ(FormatBytes(3ull << 29), "1.5 GiB");
}

TEST(CliFormat, DurationsScaleFromNanosecondsToSeconds) {
  EXPECT_EQ(FormatDuration(850), "850 ns");
  EXPECT_EQ(FormatDuration(12'300), "12.3 us");
  EXPECT_EQ(FormatDuration(4'560'000), "4.56 ms");
  EXPECT_EQ(FormatDuration(1'200'000'000), "1.20 s");
}

std::string Print(const Table& t) {
  std::ostringstream out;
  t.Print(out);
  return out.str();
}

TEST(CliTable, AlignsColumnsAndRightAlignsMarkedOnes) {
  Table t({"JOB", ">EVENTS", "STATE"});
  t.Add({"bert", "12", "live"});
  t.Add({"llama-70b", "1234567", "finished"});
  EXPECT_EQ(Print(t),
            "JOB         EVENTS  STATE\n"
            "bert            12  live\n"
            "llama-70b  1234567  finished\n");
}

TEST(CliTable, LastLeftAlignedColumnHasNoTrailingSpaces) {
  Table t({"NAME", "NOTE"});
  t.Add({"a", "a long note"});
  t.Add({"b", "x"});
  std::istringstream lines(Print(t));
  for (std::string line; std::getline(lines, line);) {
    ASSERT_FALSE(line.empty());
    EXPECT_NE(line.back(), ' ') << "'" << line << "'";
  }
}

TEST(CliTable, ShortRowsArePaddedAndLongRowsCut) {
  Table t({"A", ">B"});
  EXPECT_TRUE(t.empty());
  t.Add({"x"});
  t.Add({"y", "2", "ignored"});
  EXPECT_FALSE(t.empty());
  EXPECT_EQ(Print(t),
            "A  B\n"
            "x   \n"
            "y  2\n");
}

TEST(CliTable, HeaderAloneWhenThereAreNoRows) {
  Table t({">STEP", "SOURCE"});
  EXPECT_EQ(Print(t), "STEP  SOURCE\n");
}

}  // namespace
}  // namespace gpuspy::cli
