// Reading a trace in pieces (kineto_reader.cc) against reading it as one document: the same
// trace for every layout a cut can meet, and the whole read's error for text that does not parse.
#include <zlib.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "importers/kineto/kineto_reader.h"
#include "importers/kineto/trace_bytes.h"
#include "tests/support/subprocess.h"
#include "tests/unit/kineto_digest.h"

namespace gpuspy::importers {
namespace {

// n kernel entries and n CPU ops, `extra` inside each op's args, `sep` between entries.
std::string Entries(int n, const std::string& extra, const std::string& sep = ",\n  ") {
  std::string out;
  for (int i = 0; i < n; ++i) {
    if (i > 0) out += sep;
    absl::StrAppend(&out, R"({"ph": "X", "cat": "kernel", "name": "gemm_)", i % 7,
                    R"(", "pid": 0, "tid": 7, "ts": )", 1000 + i * 10, R"(, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": )",
                    i + 1, R"(, "grid": [64, 1, 1], "block": [128, 1, 1]}})", sep,
                    R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": )",
                    1000 + i * 10, R"(, "dur": 4, "args": {"External id": )", i, extra, "}}");
  }
  return out;
}

std::string Trace(const std::string& entries, const std::string& before = "", const std::string& after = "") {
  return absl::StrCat("{\n", before, R"("traceEvents": [)", "\n  ", entries, "\n]", after, "\n}\n");
}

// Returns how the piecewise read went (pieces 0: it fell back to one document).
KinetoReadTimings ExpectSameInPieces(const std::string& json, size_t piece = 256) {
  KinetoReadTimings timings;
  absl::StatusOr<KinetoTrace> whole = ParseKinetoTrace(json, 0);
  absl::StatusOr<KinetoTrace> pieces = ParseKinetoTrace(json, piece, &timings);
  EXPECT_EQ(whole.ok(), pieces.ok()) << whole.status() << " / " << pieces.status();
  if (whole.ok() != pieces.ok()) return timings;
  if (!whole.ok()) {
    EXPECT_EQ(whole.status(), pieces.status());
    return timings;
  }
  EXPECT_GT(whole->stats.trace_events, 0u);
  EXPECT_EQ(whole->stats.trace_events, pieces->stats.trace_events);
  EXPECT_EQ(Digest(*whole), Digest(*pieces));
  return timings;
}

TEST(KinetoPieces, PlainEntriesCutAnywhereGiveTheSameTrace) {
  const std::string json = Trace(Entries(300, ""));  // ~120 kB
  for (size_t piece : {64, 256, 1000, 4096}) {
    const KinetoReadTimings t = ExpectSameInPieces(json, piece);
    // A piece holds at least one entry (~200 bytes): at most one per entry.
    EXPECT_GE(t.pieces, std::min<size_t>(500, json.size() / piece / 2)) << piece;
    EXPECT_EQ(t.rejected_cuts, 0u);
  }
}

TEST(KinetoPieces, CompactTextWithNoWhitespace) {
  EXPECT_GT(ExpectSameInPieces(Trace(Entries(300, "", ","))).pieces, 100u);
}

TEST(KinetoPieces, ABoundaryLookalikeInsideAStringIsNotACut) {
  // "}, {" inside names and args: a candidate that simdjson rejects (the piece ends in a string).
  const KinetoReadTimings t = ExpectSameInPieces(Trace(Entries(300, R"x(, "Call stack": "f(a={}, {b}); g(}, {)")x")));
  EXPECT_GT(t.pieces, 100u);
  EXPECT_GT(t.rejected_cuts, 0u);
}

TEST(KinetoPieces, ABoundaryLookalikeInsideANestedArrayIsNotACut) {
  // Objects in an array inside args: "}, {" at depth 3 leaves the piece's brackets open.
  const KinetoReadTimings t =
      ExpectSameInPieces(Trace(Entries(300, R"(, "inputs": [{"a": 1}, {"b": 2}, {"c": [{"d": 3}, {"e": 4}]}])")));
  EXPECT_GT(t.pieces, 100u);
  EXPECT_GT(t.rejected_cuts, 0u);
}

TEST(KinetoPieces, KeysBeforeAndAfterTraceEventsAndOddEntries) {
  const std::string before =
      R"("schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100", "numSms": 108}],
"distributedInfo": {"rank": 3, "world_size": 8}, "note": {"traceEvents": "a string, not the key"},)";
  const std::string after = R"(, "baseTimeNanoseconds": 1700000000000000000, "traceName": "x")";
  // Numbers and arrays among the entries are skipped (not objects), escaped strings unescaped.
  const std::string entries = Entries(100, R"(, "label": "tab\there \"quoted\" \u00e9")") + ",\n  42,\n  [1, 2],\n  " +
                              Entries(100, "");
  EXPECT_GT(ExpectSameInPieces(Trace(entries, before, after)).pieces, 10u);
  absl::StatusOr<KinetoTrace> t = ParseKinetoTrace(Trace(entries, before, after), 256);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->identity.rank(), 3);
  EXPECT_EQ(t->identity.devices_size(), 1);
}

TEST(KinetoPieces, ATraceEventsKeyNestedBeforeTheRootsIsReadAsOneDocument) {
  // The text's first "traceEvents" key is not the root's: the head does not parse, so the trace
  // is read whole, with the same result.
  EXPECT_EQ(ExpectSameInPieces(Trace(Entries(200, ""), R"("meta": {"traceEvents": [{"x": 1}]},)")).pieces, 0u);
}

TEST(KinetoPieces, TextThatDoesNotParseGivesTheWholeReadsError) {
  const std::string json = Trace(Entries(300, ""));
  ExpectSameInPieces(json.substr(0, json.size() / 2));                // truncated
  ExpectSameInPieces(json.substr(0, json.size() / 2) + "}" + json.substr(json.size() / 2));  // stray brace
  std::string unclosed = json;
  unclosed[unclosed.find("aten::mm\"", unclosed.size() / 2) + 8] = ' ';  // a string left open
  ExpectSameInPieces(unclosed);
  ExpectSameInPieces(Trace(""));  // no entries
  ExpectSameInPieces(json + "trailing");
}

void WritePlain(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

void WriteGzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb6");
  ASSERT_NE(f, nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

// Files read in pieces: a plain file's pieces are read from the file (pread), a gzip file's out
// of the inflated text; both give what the text read as one document gives.
TEST(KinetoPieces, FilesReadInPiecesGiveTheWholeTrace) {
  testing::TempDir dir;
  const std::string json = Trace(Entries(300, R"(, "Input Dims": [[8, 16], [16, 32]])"),
                                 R"("schemaVersion": 1, )", R"(, "traceName": "t")");
  WritePlain(dir.path() + "/t.json", json);
  WriteGzip(dir.path() + "/t.json.gz", json);
  const absl::StatusOr<KinetoTrace> whole = ParseKinetoTrace(json, 0);
  ASSERT_TRUE(whole.ok()) << whole.status();
  for (const std::string name : {"t.json", "t.json.gz"}) {
    for (size_t piece : {64, 1000, 4096}) {
      KinetoReadTimings timings;
      const absl::StatusOr<KinetoTrace> read =
          ReadKinetoTraceInPieces(dir.path() + "/" + name, piece, &timings);
      ASSERT_TRUE(read.ok()) << name << ": " << read.status();
      EXPECT_GT(timings.pieces, json.size() / piece / 4) << name << " " << piece;
      EXPECT_EQ(Digest(*whole), Digest(*read)) << name << " " << piece;
    }
  }
}

// A gzip file is inflated as its pieces are read: the whole read's trace, in a window of a few MB
// rather than the text; and for a file that is damaged or does not parse, the whole read's error.
TEST(KinetoPieces, AGzipFileIsReadAsItInflatesInAWindowSmallerThanItsText) {
  testing::TempDir dir;
  const std::string json = Trace(Entries(70'000, R"(, "Input Dims": [[8, 16], [16, 32]])"));
  ASSERT_GT(json.size(), size_t{20} << 20);
  const std::string path = dir.path() + "/t.json.gz";
  WriteGzip(path, json);
  const absl::StatusOr<KinetoTrace> whole = ParseKinetoTrace(json, 0);
  ASSERT_TRUE(whole.ok()) << whole.status();
  KinetoReadTimings timings;
  const absl::StatusOr<KinetoTrace> read = ReadKinetoTrace(path, &timings);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(Digest(*whole), Digest(*read));
  EXPECT_EQ(timings.json_bytes, json.size());
  EXPECT_GT(timings.pieces, 20u);
  EXPECT_LE(timings.text_held_bytes, uint64_t{8} << 20);
  // Read as one document (no pieces), the file's text is all held.
  KinetoReadTimings at_once;
  ASSERT_TRUE(ReadKinetoTraceInPieces(path, 0, &at_once).ok());
  EXPECT_EQ(at_once.text_held_bytes, json.size());

  std::string gz;
  {
    std::ifstream in(path, std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string truncated = dir.path() + "/truncated.json.gz";
  WritePlain(truncated, gz.substr(0, gz.size() * 3 / 4));
  const std::string broken = dir.path() + "/broken.json.gz";
  const size_t stray = json.find("},\n  {", json.size() * 3 / 4) + 2;  // a stray '}' between entries
  WriteGzip(broken, json.substr(0, stray) + "}" + json.substr(stray));
  for (const std::string& bad : {truncated, broken}) {
    const absl::StatusOr<KinetoTrace> pieces = ReadKinetoTrace(bad);
    const absl::StatusOr<KinetoTrace> one_document = ReadKinetoTraceInPieces(bad, 0);
    ASSERT_FALSE(one_document.ok()) << bad;
    EXPECT_EQ(pieces.status(), one_document.status()) << bad;
  }
}

// CopyOut hands out exactly the text json() shows, wherever the range starts and ends.
TEST(KinetoPieces, CopyOutIsTheTextAtAnyRange) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < 300000; ++i) absl::StrAppend(&text, "{\"n\": ", i, "},\n");
  WritePlain(dir.path() + "/t.json", text);
  WriteGzip(dir.path() + "/t.json.gz", text);
  for (const std::string name : {"t.json", "t.json.gz"}) {
    absl::StatusOr<TraceBytes> bytes = TraceBytes::Read(dir.path() + "/" + name, /*populate=*/false);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    ASSERT_EQ(bytes->json(), text);
    for (const auto& [offset, n] : std::vector<std::pair<size_t, size_t>>{
             {0, 1}, {0, text.size()}, {4095, 2}, {4096, 70000}, {text.size() - 3, 3}, {123457, 0}}) {
      std::string out(n, '?');
      bytes->CopyOut(offset, n, out.data());
      EXPECT_EQ(out, text.substr(offset, n)) << name << " " << offset << "+" << n;
    }
  }
  TraceBytes copy = TraceBytes::Copy(text);
  std::string out(10, '?');
  copy.CopyOut(text.size() - 10, 10, out.data());
  EXPECT_EQ(out, text.substr(text.size() - 10));
}

// Inflated text goes back in whole huge pages, by address: text before the last huge-page boundary
// at or before the offset reads as zeros after, the text from that boundary to the offset is still
// there (handing back part of a huge page would split it, and the reader would copy the rest of
// it out through 4 KiB entries).
TEST(KinetoPieces, InflatedTextIsHandedBackInWholeHugePages) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < 7 * kHugePageBytes / 2; ++i) absl::StrAppend(&text, "{\"n\": ", i, "},\n");
  WriteGzip(dir.path() + "/t.json.gz", text);
  absl::StatusOr<TraceBytes> bytes = TraceBytes::Read(dir.path() + "/t.json.gz", /*populate=*/false);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  const uintptr_t base = reinterpret_cast<uintptr_t>(bytes->json().data());
  const size_t boundary = (base + kHugePageBytes) / kHugePageBytes * kHugePageBytes - base;  // first past 0
  const size_t offset = boundary + kHugePageBytes / 2;
  ASSERT_LT(offset, text.size());
  bytes->ReleaseBefore(offset);
  EXPECT_TRUE(bytes->lost_text());
  const std::string_view json = bytes->json();
  EXPECT_EQ(json.substr(0, boundary), std::string(boundary, '\0'));
  EXPECT_EQ(json.substr(boundary, offset - boundary), std::string_view(text).substr(boundary, offset - boundary));
  EXPECT_EQ(json.substr(offset), std::string_view(text).substr(offset));
}

}  // namespace
}  // namespace gpuspy::importers
