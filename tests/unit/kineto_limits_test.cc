// The importer's bounds (issue 34): a name longer than gpuspyd keeps is cut and counted; a value
// too long to parse in bounded memory is refused before it is parsed; a gzip file inflating past
// --max-trace-bytes is refused at that size.
#include <zlib.h>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/ingest/batch_ingestor.h"
#include "importers/kineto/bounded_strings.h"
#include "importers/kineto/kineto_reader.h"
#include "importers/kineto/long_values.h"
#include "tests/support/subprocess.h"

namespace gpuspy::importers {
namespace {

static_assert(kMaxStringBytes == collector::kMaxDictionaryStringBytes,
              "the importer cuts names where gpuspyd would refuse them");

std::string TraceWithKernelName(const std::string& name) {
  return R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": ")" + name +
         R"(", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"device": 0, "stream": 7}}]})";
}

TEST(KinetoLimits, ANameLongerThanGpuspydKeepsIsCutWithAMarkerAndCounted) {
  auto t = ParseKinetoTrace(TraceWithKernelName(std::string(100 * 1024, 'k')));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->events.kernels.size(), 1u);
  const std::string_view name = t->strings.Get(t->events.kernels[0].name);
  EXPECT_EQ(name.size(), kMaxStringBytes);
  EXPECT_TRUE(name.ends_with(kCutMarker));
  EXPECT_EQ(t->stats.cut_strings, 1u);
}

TEST(KinetoLimits, ANameAtTheLimitIsKeptWhole) {
  auto t = ParseKinetoTrace(TraceWithKernelName(std::string(kMaxStringBytes, 'k')));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->strings.Get(t->events.kernels[0].name).size(), kMaxStringBytes);
  EXPECT_EQ(t->stats.cut_strings, 0u);
}

TEST(KinetoLimits, ACutNeverSplitsAUtf8Character) {
  std::string value;
  while (value.size() < 2 * kMaxStringBytes) value += "\xc3\xa9";  // é
  std::string scratch;
  const std::string_view cut = CutToLimit(value, &scratch);
  ASSERT_LE(cut.size(), kMaxStringBytes);
  const std::string_view kept = cut.substr(0, cut.size() - kCutMarker.size());
  EXPECT_EQ(kept.size() % 2, 0u) << "whole two-byte characters only";
}

TEST(KinetoLimits, AValueOfManyMegabytesIsRefusedBeforeItIsParsed) {
  auto t = ParseKinetoTrace(TraceWithKernelName(std::string(2 * kMaxValueBlockBytes, 'k')));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("MiB"), std::string::npos) << t.status();
}

TEST(KinetoLimits, EscapedQuotesDoNotHideALongValue) {
  std::string text = "[\"";
  while (text.size() < 64) text += "\\\"";
  text += "\"]";
  EXPECT_TRUE(FindOverlongValue(text, 16).has_value());
  // Ordinary text has a quote in every block.
  EXPECT_FALSE(FindOverlongValue(R"([{"a": "b"}, {"c": "d"}, {"e": "f"}])", 8).has_value());
}

// The scan of text that arrives a part at a time finds what the whole text's check finds, for
// every way of cutting it into parts: quotes and runs of backslashes cut anywhere.
TEST(KinetoLimits, TextScannedAPartAtATimeFindsTheSameLongValue) {
  std::vector<std::string> texts = {R"([{"a": "b"}, {"c": "d"}, {"e": "f"}])",
                                    std::string(40, 'x') + R"("quoted")" + std::string(40, 'y')};
  std::string escaped = "[\"";
  while (escaped.size() < 64) escaped += "\\\"";
  texts.push_back(escaped + "\"]");
  std::string runs = "[\"";  // runs of 1 to 5 backslashes before each quote
  for (int i = 0; runs.size() < 120; ++i) runs += std::string(1 + i % 5, '\\') + "\"ab";
  texts.push_back(runs + "\"]");
  for (const std::string& text : texts) {
    for (size_t block : {8u, 16u, 33u}) {
      const std::optional<size_t> whole = FindOverlongValue(text, block);
      for (size_t part = 1; part <= 9; ++part) {
        OverlongValueScan scan(block);
        bool going = true;
        for (size_t at = 0; at < text.size() && going; at += part) {
          going = scan.Feed(std::string_view(text).substr(at, part));
        }
        EXPECT_EQ(scan.found(), whole) << text << " block " << block << " part " << part;
        EXPECT_EQ(going, !whole.has_value());
      }
    }
  }
  // The escaped quotes and a block with no quote at all are found, not only agreed on.
  EXPECT_TRUE(FindOverlongValue(texts[2], 16).has_value());
  EXPECT_EQ(FindOverlongValue(texts[1], 16), std::optional<size_t>(0));
}

TEST(KinetoLimits, AGzipBombIsRefusedAtTheLimitItWasGiven) {
  testing::TempDir dir;
  const std::string gz = dir.path() + "/bomb.json.gz";
  gzFile f = gzopen(gz.c_str(), "wb9");
  // A '{' and then whitespace starts like a trace: only its size can refuse it (zeros are
  // refused from their first byte, hardening_e2e_test).
  const std::string spaces(1 << 20, ' ');
  gzwrite(f, "{", 1);
  for (int i = 0; i < 64; ++i) gzwrite(f, spaces.data(), static_cast<unsigned>(spaces.size()));
  gzclose(f);
  auto t = ReadKinetoTrace(gz, nullptr, {.max_json_bytes = 8 << 20, .progress = {}});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted) << t.status();
  EXPECT_NE(t.status().message().find("--max-trace-bytes"), std::string::npos) << t.status();
}

TEST(KinetoLimits, APlainFileOverTheLimitIsRefused) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/t.json";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const std::string text = TraceWithKernelName("k");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  auto t = ReadKinetoTrace(path, nullptr, {.max_json_bytes = 16, .progress = {}});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted) << t.status();
}

}  // namespace
}  // namespace gpuspy::importers
