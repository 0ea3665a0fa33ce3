// The Kineto importer on the real traces in ../shared/traces gives, byte for byte, what the
// nlohmann SAX importer it replaced gave (digests recorded with that importer at commit 8a2568a).
// A digest covers every event column through the wire encoding (strings resolved, in interning
// order), the identity and the per-category counts, so any change in mapping shows up here.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "importers/kineto/kineto_reader.h"
#include "tests/unit/kineto_digest.h"

namespace gpuspy::importers {
namespace {

// Recorded with the nlohmann SAX importer (the parser before simdjson).
const std::map<std::string, uint64_t> kRecorded = {
    {"alexnet_a100.json.gz", 10224212265008922457ull},
    {"event_sync_a100.json.gz", 10618858348386291742ull},
    {"nccl_a100.json.gz", 2888760837432820750ull},
    {"sampled_rank-0.json.gz", 119426109217395981ull},
    {"sampled_rank-1.json.gz", 17727231727603693737ull},
    {"triton_a100.json.gz", 6777693782107444809ull},
};

// Each trace as one read gives the recorded digest, and so does each read in small pieces
// (hundreds of them per trace, cut at every kind of boundary the traces have): the inflated text
// behind each piece is handed back as the read goes, so a mapping that kept a view into it would
// read zeros and differ here.
TEST(KinetoRealTraces, ImportMatchesTheNlohmannImporterDigestsWholeAndInPieces) {
  const std::filesystem::path dir = std::filesystem::path(SOURCE_DIR) / ".." / "shared" / "traces";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no " << dir;
  size_t compared = 0;
  for (const auto& [name, digest] : kRecorded) {
    const std::filesystem::path file = dir / name;
    if (!std::filesystem::exists(file)) continue;
    absl::StatusOr<KinetoTrace> whole = ReadKinetoTrace(file.string());
    ASSERT_TRUE(whole.ok()) << whole.status();
    EXPECT_EQ(Digest(*whole), digest) << name;
    for (size_t piece : {size_t{4096}, size_t{100'000}}) {
      KinetoReadTimings timings;
      absl::StatusOr<KinetoTrace> t = ReadKinetoTraceInPieces(file.string(), piece, &timings);
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(Digest(*t), digest) << name << " in pieces of " << piece;
      EXPECT_GT(timings.index_ns, 0) << name;
      if (timings.json_bytes >= 2 * piece) {
        // All but the last two pieces' worth (the tail) read piece by piece; a piece runs past
        // its size to the next boundary (an entry is up to a few hundred bytes).
        EXPECT_GT(timings.pieces, 0u) << name;
        EXPECT_GE(timings.pieces + 3, timings.json_bytes / piece * 8 / 10) << name << " in pieces of " << piece;
      } else {
        EXPECT_EQ(timings.pieces, 0u) << name;  // small: one document
      }
    }
    ++compared;
  }
  EXPECT_GT(compared, 0u);
}

// The 2021 dialect (which the nlohmann importer did not read, so it has no recorded digest): the
// same events read whole and in pieces, and all of them: its 9,299 kernels, 338 copies and 466
// memsets, the 15,724 runtime calls and 28,549 operators (counted with python3 + json).
TEST(KinetoRealTraces, The2021DialectReadsTheSameWholeAndInPiecesAndAllOfIt) {
  const std::filesystem::path file = std::filesystem::path(SOURCE_DIR) / ".." / "shared" / "traces" /
                                     "resnet50_2021_autograd_nw4.json.gz";
  ASSERT_TRUE(std::filesystem::exists(file)) << file;
  absl::StatusOr<KinetoTrace> whole = ReadKinetoTrace(file.string());
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->events.kernels.size(), 9'299u);
  EXPECT_EQ(whole->events.memcpys.size(), 338u);
  EXPECT_EQ(whole->events.memsets.size(), 466u);
  EXPECT_EQ(whole->events.apis.size(), 15'724u);
  EXPECT_GE(whole->events.nvtx_ranges.size(), 28'549u);  // the operators, and the profiler's span
  for (size_t piece : {size_t{4096}, size_t{100'000}}) {
    absl::StatusOr<KinetoTrace> t = ReadKinetoTraceInPieces(file.string(), piece, nullptr);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(Digest(*t), Digest(*whole)) << "in pieces of " << piece;
  }
}

// Prints the digests of every trace in the directory (to record them).
TEST(KinetoRealTraces, DISABLED_PrintDigests) {
  const std::filesystem::path dir = std::filesystem::path(SOURCE_DIR) / ".." / "shared" / "traces";
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    absl::StatusOr<KinetoTrace> t = ReadKinetoTrace(f.path().string());
    if (t.ok()) std::printf("    {\"%s\", %lluull},\n", f.path().filename().c_str(),
                            static_cast<unsigned long long>(Digest(*t)));
  }
}

}  // namespace
}  // namespace gpuspy::importers
