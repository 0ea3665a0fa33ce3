// The Kineto importer on the real traces in ../shared/traces gives, byte for byte, what the
// nlohmann SAX importer it replaced gave (digests recorded with that importer at commit 8a2568a).
// A digest covers every event column through the wire encoding (strings resolved, in interning
// order), the identity and the per-category counts, so any change in mapping shows up here.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "codec/batch_encoder.h"
#include "importers/kineto/kineto_reader.h"

namespace gpuspy::importers {
namespace {

uint64_t Fnv1a(const std::string& bytes, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t Digest(const KinetoTrace& t) {
  BatchEncoder encoder(&t.strings);
  v1::EventBatch batch;
  encoder.Encode(t.events, 1, LossCounters{}, &batch);
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    batch.SerializeToCodedStream(&coded);
    t.identity.SerializeToCodedStream(&coded);
  }
  std::string stats = absl::StrCat(t.stats.trace_events, ";", t.stats.collectives, ";");
  for (const auto& [k, n] : t.stats.imported) absl::StrAppend(&stats, "+", k, "=", n, ";");
  for (const auto& [k, n] : t.stats.skipped) absl::StrAppend(&stats, "-", k, "=", n, ";");
  return Fnv1a(stats, Fnv1a(bytes));
}

// Recorded with the nlohmann SAX importer (the parser before simdjson).
const std::map<std::string, uint64_t> kRecorded = {
    {"alexnet_a100.json.gz", 10224212265008922457ull},
    {"event_sync_a100.json.gz", 10618858348386291742ull},
    {"nccl_a100.json.gz", 2888760837432820750ull},
    {"sampled_rank-0.json.gz", 119426109217395981ull},
    {"sampled_rank-1.json.gz", 17727231727603693737ull},
    {"triton_a100.json.gz", 6777693782107444809ull},
};

TEST(KinetoRealTraces, ImportMatchesTheNlohmannImporterDigests) {
  const std::filesystem::path dir = std::filesystem::path(SOURCE_DIR) / ".." / "shared" / "traces";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no " << dir;
  size_t compared = 0;
  for (const auto& [name, digest] : kRecorded) {
    const std::filesystem::path file = dir / name;
    if (!std::filesystem::exists(file)) continue;
    absl::StatusOr<KinetoTrace> t = ReadKinetoTrace(file.string());
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(Digest(*t), digest) << name;
    ++compared;
  }
  EXPECT_GT(compared, 0u);
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
