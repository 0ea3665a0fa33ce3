// The inflated size of a gzip file before it is inflated (importers/kineto/gzip_size.h): the
// trailer believed only where it must be exact, everything else counted in bounded memory.
#include "importers/kineto/gzip_size.h"

#include <zlib.h>

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <span>
#include <string>

namespace gpuspy::importers {
namespace {

// `text` as one gzip member.
std::string Gzip(const std::string& text, int level = 6) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::span<const unsigned char> Bytes(const std::string& s) {
  return {reinterpret_cast<const unsigned char*>(s.data()), s.size()};
}

std::string Json(size_t bytes) {
  std::string s = "[";
  for (int i = 0; s.size() < bytes; ++i) s += "{\"name\": \"k" + std::to_string(i % 97) + "\", \"ts\": " + std::to_string(i) + "},";
  return s;
}

TEST(GzipSize, AOneMemberFileOfAFewMegabytesIsTakenAtItsTrailer) {
  const std::string text = Json(1 << 20);
  const std::string gz = Gzip(text);
  EXPECT_EQ(ExactTrailerSize(Bytes(gz)).value_or(0), text.size());
}

// ISIZE is the last member's size mod 2^32: it says nothing of the members before, nor of a
// member past 4 GiB, which only a file of 2^32 / 1032 compressed bytes or more can hold.
TEST(GzipSize, TheTrailerIsNotBelievedWhereItMayNotBeTheSize) {
  const std::string a = Gzip(Json(100'000)), b = Gzip(Json(50'000));
  EXPECT_FALSE(ExactTrailerSize(Bytes(a + b)).has_value()) << "two members";
  std::string big(4'200'000, '\0');  // large enough to hold a member of 4 GiB and more
  std::memcpy(big.data(), a.data(), 10);
  EXPECT_FALSE(ExactTrailerSize(Bytes(big)).has_value()) << "may have wrapped";
  // A claim deflate cannot produce from so few bytes (the fuzzer's 2 KB file claiming 3.5 GB).
  std::string liar = a;
  const uint32_t claim = 3'508'537'900u;
  std::memcpy(liar.data() + liar.size() - 4, &claim, 4);
  EXPECT_FALSE(ExactTrailerSize(Bytes(liar)).has_value());
  EXPECT_FALSE(ExactTrailerSize(Bytes(std::string("\x1f\x8b", 2))).has_value());
}

// A file too large for an exact trailer: its ISIZE is tried first when a trace could have it (the
// inflate into it checks it), so a 200 MB trace is not inflated twice, once only to be counted.
TEST(GzipSize, ALargerOneMemberFilesPlausibleTrailerIsTried) {
  std::mt19937 rng(7);
  std::string text(10'000'000, '0');  // random hex: ~2x compression, a member of ~5 MB
  for (char& c : text) c = "0123456789abcdef"[rng() % 16];
  const std::string gz = Gzip(text, 1);
  ASSERT_GT(gz.size(), (uint64_t{1} << 32) / 1032) << "must be past the exact trailer's reach";
  EXPECT_FALSE(ExactTrailerSize(Bytes(gz)).has_value());
  EXPECT_EQ(PlausibleTrailerSize(Bytes(gz)).value_or(0), text.size());
  // Near misses: a claim more than 64x the file (zeros would inflate so; a trace does not), one
  // smaller than the file, and two members.
  std::string bomb_claim = gz;
  const uint32_t claim = static_cast<uint32_t>(gz.size() * 65);
  std::memcpy(bomb_claim.data() + bomb_claim.size() - 4, &claim, 4);
  EXPECT_FALSE(PlausibleTrailerSize(Bytes(bomb_claim)).has_value());
  std::string shrunk = gz;
  const uint32_t small = static_cast<uint32_t>(gz.size() - 1);
  std::memcpy(shrunk.data() + shrunk.size() - 4, &small, 4);
  EXPECT_FALSE(PlausibleTrailerSize(Bytes(shrunk)).has_value());
  EXPECT_FALSE(PlausibleTrailerSize(Bytes(gz + Gzip(Json(1000)))).has_value());
}

TEST(GzipSize, EveryMemberIsCounted) {
  const std::string a = Json(300'000), b = Json(200'000);
  const InflatedCount c = CountInflatedBytes(Bytes(Gzip(a) + Gzip(b, 1)), uint64_t{1} << 30);
  EXPECT_FALSE(c.over_limit);
  EXPECT_FALSE(c.damaged);
  EXPECT_EQ(c.bytes, a.size() + b.size());
}

// A bomb stops being counted just past the limit: the count costs time up to the limit, no memory.
TEST(GzipSize, CountingStopsPastTheLimit) {
  const std::string zeros(64 << 20, '\0');
  const InflatedCount c = CountInflatedBytes(Bytes(Gzip(zeros, 9)), 8 << 20);
  EXPECT_TRUE(c.over_limit);
  EXPECT_GT(c.bytes, uint64_t{8} << 20);
  EXPECT_LE(c.bytes, (uint64_t{8} << 20) + (64 << 10));
  // Exactly at the limit is not over it.
  EXPECT_FALSE(CountInflatedBytes(Bytes(Gzip(std::string(1000, 'x'))), 1000).over_limit);
}

TEST(GzipSize, ADamagedMemberIsNamedByWhereItStarts) {
  const std::string first = Gzip(Json(100'000));
  std::mt19937 rng(7);
  std::string text(200'000, '\0');
  for (char& ch : text) ch = static_cast<char>('a' + rng() % 26);
  const std::string second = Gzip(text);
  // Truncated inside the second member.
  InflatedCount c = CountInflatedBytes(Bytes(first + second.substr(0, second.size() / 2)), uint64_t{1} << 30);
  EXPECT_TRUE(c.damaged);
  EXPECT_EQ(c.member_offset, first.size());
  // Corrupt deflate data in the first member.
  std::string corrupt = first + second;
  for (size_t i = 10; i < 40; ++i) corrupt[i] = static_cast<char>(0xff);
  c = CountInflatedBytes(Bytes(corrupt), uint64_t{1} << 30);
  EXPECT_TRUE(c.damaged);
  EXPECT_EQ(c.member_offset, 0u);
  // Bytes after the last member that are no gzip member are not read (as gzip -d warns and stops).
  c = CountInflatedBytes(Bytes(first + "trailing"), uint64_t{1} << 30);
  EXPECT_FALSE(c.damaged);
  EXPECT_EQ(c.bytes, Json(100'000).size());
}

// The head is the text's first bytes, whatever follows; shorter when the text is; nothing from
// bytes that are not gzip.
TEST(GzipSize, TheHeadIsTheTextsFirstBytes) {
  const std::string text = Json(1 << 20);
  EXPECT_EQ(InflatedHead(Bytes(Gzip(text)), 4096), text.substr(0, 4096));
  EXPECT_EQ(InflatedHead(Bytes(Gzip("{}")), 4096), "{}");
  EXPECT_EQ(InflatedHead(Bytes(std::string("not gzip at all")), 4096), "");
  // A head of a 64 MiB member of zeros costs the head, not the member (no way to see memory
  // here; the e2e test measures it): its bytes are the zeros.
  const std::string zeros(64 << 20, '\0');
  EXPECT_EQ(InflatedHead(Bytes(Gzip(zeros, 9)), 16), std::string(16, '\0'));
}

}  // namespace
}  // namespace gpuspy::importers
