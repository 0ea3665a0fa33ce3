// A gzip'd trace inflated as it is read (gzip_text_stream.h): the text exactly as gzip -d gives
// it, in a window much smaller than the text, and a refusal (never a wrong text) on damage, on a
// text past the size limit or a value too long to parse, and on a window past its bound.
#include "importers/kineto/gzip_text_stream.h"

#include <zlib.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "importers/kineto/long_values.h"
#include "tests/support/subprocess.h"

namespace gpuspy::importers {
namespace {

// Text like a trace's: lines that differ, so that it compresses but not to nothing.
std::string Lines(size_t bytes, int seed = 0) {
  std::string out;
  for (int64_t i = 0; out.size() < bytes; ++i) {
    absl::StrAppend(&out, R"({"ph": "X", "name": "kernel_)", (i * 7919 + seed) % 1013, R"(", "ts": )",
                    1000 + i * 13, "},\n");
  }
  out.resize(bytes);
  return out;
}

// Appends one gzip member holding `text` to `path`.
void AppendMember(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "ab6");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(f);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The whole text, read front to back as the piece reader does: a bit more each time, what was
// read dropped. False when a Fill failed.
bool StreamAll(GzipTextStream& s, std::string* out, size_t step = 300'000) {
  size_t at = 0;
  while (!s.complete() || at < s.end()) {
    if (!s.Fill(at + step)) return false;
    const size_t to = std::min(s.end(), at + step);
    out->append(s.View(at, to));
    at = to;
    s.Drop(at);
  }
  return true;
}

constexpr uint64_t kNoLimit = uint64_t{1} << 40;

TEST(GzipTextStream, ConcatenatedMembersAreOneTextInAWindowSmallerThanIt) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/t.json.gz";
  const std::string a = Lines(9 << 20, 1), b = Lines(5 << 20, 2), c = Lines(7 << 20, 3);
  AppendMember(path, a);
  AppendMember(path, b);
  AppendMember(path, c);
  auto s = GzipTextStream::Open(path, kNoLimit);
  ASSERT_NE(s, nullptr);
  std::string text;
  ASSERT_TRUE(StreamAll(*s, &text));
  EXPECT_EQ(text.size(), a.size() + b.size() + c.size());
  EXPECT_TRUE(text == a + b + c);
  EXPECT_EQ(s->expected_size(), text.size());
  // 21 MiB of text through a window of the initial 8 MiB: never grown.
  EXPECT_LE(s->peak_window_bytes(), size_t{8} << 20);
  EXPECT_GT(s->inflate_ns(), 0);
}

TEST(GzipTextStream, BytesAfterTheLastMemberAreIgnoredAsTheWholeReadIgnoresThem) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/t.json.gz";
  const std::string a = Lines(100'000);
  AppendMember(path, a);
  WriteFile(path, ReadFile(path) + std::string("\0\0\0junk", 7));
  auto s = GzipTextStream::Open(path, kNoLimit);
  ASSERT_NE(s, nullptr);
  std::string text;
  ASSERT_TRUE(StreamAll(*s, &text));
  EXPECT_TRUE(text == a);
}

TEST(GzipTextStream, ViewAndCopyOutShowTheTextAnywhereInTheWindow) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/t.json.gz";
  const std::string a = Lines(3 << 20);
  AppendMember(path, a);
  auto s = GzipTextStream::Open(path, kNoLimit);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Fill(2 << 20));
  s->Drop(1 << 20);
  ASSERT_TRUE(s->Fill(a.size()));  // moves what is left to the window's start
  for (size_t from : {size_t{1} << 20, (size_t{1} << 20) + 7, a.size() - 100}) {
    EXPECT_EQ(s->View(from, from + 50), std::string_view(a).substr(from, 50));
    std::string copy(50, '\0');
    s->CopyOut(from, 50, copy.data());
    EXPECT_EQ(copy, a.substr(from, 50));
  }
  // The parser's padding: zeros after the text.
  const std::string_view tail = s->View(a.size() - 1, a.size());
  for (size_t i = 1; i <= kPaddingBytes; ++i) EXPECT_EQ(tail.data()[i], '\0');
}

// Each of these makes Fill fail, never hand out wrong text: the whole read then says why.
TEST(GzipTextStream, DamageIsAFailureNotText) {
  testing::TempDir dir;
  const std::string good = dir.path() + "/good.json.gz";
  const std::string a = Lines(2 << 20);
  AppendMember(good, a);
  const std::string gz = ReadFile(good);
  std::string crc = gz;
  crc[crc.size() - 6] ^= 0x55;  // the trailer's CRC-32
  std::string size = gz;
  size[size.size() - 2] ^= 0x01;  // the trailer's ISIZE
  std::string middle = gz;
  middle[middle.size() / 2] ^= 0xff;  // the deflate data
  for (const auto& [name, bytes] : std::initializer_list<std::pair<std::string, std::string>>{
           {"truncated", gz.substr(0, gz.size() / 2)},
           {"no trailer", gz.substr(0, gz.size() - 8)},
           {"crc", crc},
           {"isize", size},
           {"middle", middle}}) {
    const std::string path = dir.path() + "/" + name + ".json.gz";
    WriteFile(path, bytes);
    auto s = GzipTextStream::Open(path, kNoLimit);
    ASSERT_NE(s, nullptr) << name;
    std::string text;
    EXPECT_FALSE(StreamAll(*s, &text)) << name;
    EXPECT_TRUE(s->failed()) << name;
    EXPECT_FALSE(s->Fill(1)) << name << ": a failed stream stays failed";
  }
}

TEST(GzipTextStream, TextPastTheSizeLimitIsAFailure) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/t.json.gz";
  AppendMember(path, Lines(3 << 20));
  auto over = GzipTextStream::Open(path, 2 << 20);
  ASSERT_NE(over, nullptr);
  std::string text;
  EXPECT_FALSE(StreamAll(*over, &text));
  auto at = GzipTextStream::Open(path, 3 << 20);  // exactly at the limit: read
  ASSERT_NE(at, nullptr);
  text.clear();
  EXPECT_TRUE(StreamAll(*at, &text));
}

TEST(GzipTextStream, AValueTooLongToParseIsAFailure) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/t.json.gz";
  AppendMember(path, R"({"traceEvents": [{"name": ")" + std::string(2 * kMaxValueBlockBytes, 'k') + R"("}]})");
  auto s = GzipTextStream::Open(path, kNoLimit);
  ASSERT_NE(s, nullptr);
  std::string text;
  EXPECT_FALSE(StreamAll(*s, &text));
  // Found as the text came, not after the whole value was held.
  EXPECT_LE(s->peak_window_bytes(), size_t{8} << 20);
}

TEST(GzipTextStream, AWindowPastItsBoundIsAFailure) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/t.json.gz";
  AppendMember(path, Lines(20 << 20));
  auto s = GzipTextStream::Open(path, kNoLimit, /*max_window_bytes=*/12 << 20);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->Fill(10 << 20));
  EXPECT_FALSE(s->Fill(16 << 20));  // nothing dropped: 16 MiB would have to be held
}

TEST(GzipTextStream, OnlyGzipFilesAreOpened) {
  testing::TempDir dir;
  WriteFile(dir.path() + "/plain.json", R"({"traceEvents": []})");
  EXPECT_EQ(GzipTextStream::Open(dir.path() + "/plain.json", kNoLimit), nullptr);
  EXPECT_EQ(GzipTextStream::Open(dir.path() + "/missing.json.gz", kNoLimit), nullptr);
  EXPECT_EQ(GzipTextStream::Open(dir.path(), kNoLimit), nullptr);  // a directory
}

}  // namespace
}  // namespace gpuspy::importers
