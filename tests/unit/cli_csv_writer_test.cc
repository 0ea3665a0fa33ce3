// --csv's one quoting rule (viewer/cli/csv_writer.h): what Python's csv module and spreadsheets
// read back as the same fields.
#include "viewer/cli/csv_writer.h"

#include <sstream>

#include <gtest/gtest.h>

namespace gpuspy::cli {
namespace {

TEST(CsvWriter, PlainFieldsAreWrittenAsTheyAre) {
  EXPECT_EQ(CsvField("sync_stall"), "sync_stall");
  EXPECT_EQ(CsvField("12345"), "12345");
  EXPECT_EQ(CsvField(""), "");
}

TEST(CsvWriter, CommasQuotesAndLineBreaksAreQuoted) {
  EXPECT_EQ(CsvField("void foo<float, 4>(float*)"), "\"void foo<float, 4>(float*)\"");
  EXPECT_EQ(CsvField("call \"x.item()\" less"), "\"call \"\"x.item()\"\" less\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(CsvField("\""), "\"\"\"\"");
}

TEST(CsvWriter, EdgeSpacesAreQuotedSoReadersDoNotTrimThem) {
  EXPECT_EQ(CsvField(" lead"), "\" lead\"");
  EXPECT_EQ(CsvField("trail "), "\"trail \"");
  EXPECT_EQ(CsvField("in side"), "in side");
}

TEST(CsvWriter, ARowIsCommaSeparatedAndEndsInCrLf) {
  std::ostringstream out;
  WriteCsvRow(out, {"a", "b,c", "", "d\"e"});
  EXPECT_EQ(out.str(), "a,\"b,c\",,\"d\"\"e\"\r\n");
}

}  // namespace
}  // namespace gpuspy::cli
