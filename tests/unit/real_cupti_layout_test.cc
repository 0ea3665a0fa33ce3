// The real libcupti's buffer walker against what gpuspy assumes: the record size of every kind
// the parser reads (inject/core/activity_records.h), and the fake CUPTI's walker (tests/fake_cuda)
// record by record on random mixes, so neither can drift from the library they stand for.
#include <gtest/gtest.h>

#include <random>

#include "inject/core/activity_records.h"
#include "tests/fake_cuda/fake_activity_buffers.h"
#include "tests/unit/real_cupti.h"

namespace gpuspy::inject {
namespace {

using gpuspy::testing::Describe;
using gpuspy::testing::LoadRealCupti;
using gpuspy::testing::RealCupti;
using gpuspy::testing::RecordBuffer;
using gpuspy::testing::Walk;
using gpuspy::testing::WalkBuffer;

// CUDA 13.0's CUPTI; an upgrade is welcome but must be looked at (new record versions).
constexpr uint32_t kCuptiApiVersion = 130001;
// A kind neither walker knows: CUPTI_ACTIVITY_KIND_COUNT is one past the last.
constexpr auto kUnknownKind = static_cast<CUpti_ActivityKind>(CUPTI_ACTIVITY_KIND_COUNT + 7);
constexpr int kPropertyCases = 500;
constexpr int kMaxRecordsPerCase = 40;

// Each kind in `assumed`, alone in a buffer before a RUNTIME record: the real walker must find
// that second record exactly `bytes` (padded) after the first. One line per kind that disagrees.
std::vector<std::string> LayoutMismatches(const RealCupti& real,
                                          const std::vector<ParsedKind>& assumed) {
  std::vector<std::string> out;
  for (const ParsedKind& k : assumed) {
    RecordBuffer b;
    b.Append(k.kind, k.bytes);
    b.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
    const Walk w = WalkBuffer(real.next_record, b.data(), b.size());
    const Walk want{b.offsets(), {k.kind, CUPTI_ACTIVITY_KIND_RUNTIME},
                    CUPTI_ERROR_MAX_LIMIT_REACHED};
    if (w != want) {
      out.push_back(std::string(k.name) + ": assumed " + std::to_string(k.bytes) +
                    " bytes; real walk " + Describe(w));
    }
  }
  return out;
}

class RealCuptiLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    real_ = LoadRealCupti(&why);
    if (real_ == nullptr) GTEST_SKIP() << "no real CUPTI to check against: " << why;
  }
  const RealCupti* real_ = nullptr;
};

TEST_F(RealCuptiLayoutTest, ToolkitIsTheCuptiTheParserWasWrittenFor) {
  uint32_t version = 0;
  ASSERT_EQ(real_->version(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, static_cast<uint32_t>(CUPTI_API_VERSION)) << "headers and library differ";
  EXPECT_EQ(version, kCuptiApiVersion)
      << "a new CUPTI: re-run this suite and check activity_records.h against its changelog";
}

TEST_F(RealCuptiLayoutTest, EveryParsedKindHasTheSizeTheRealWalkerStepsBy) {
  const std::vector<ParsedKind> parsed(std::begin(kParsedKinds), std::end(kParsedKinds));
  const std::vector<std::string> bad = LayoutMismatches(*real_, parsed);
  EXPECT_TRUE(bad.empty()) << ::testing::PrintToString(bad);
}

TEST_F(RealCuptiLayoutTest, OracleCatchesAKindReadWithAnOlderRecordVersion) {
  // What a parser still reading CONCURRENT_KERNEL as CUpti_ActivityKernel9 (CUDA 12) would assume.
  static_assert(sizeof(CUpti_ActivityKernel9) != sizeof(CUpti_ActivityKernel10));
  std::vector<ParsedKind> stale(std::begin(kParsedKinds), std::end(kParsedKinds));
  for (ParsedKind& k : stale) {
    if (k.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) k.bytes = sizeof(CUpti_ActivityKernel9);
  }
  const std::vector<std::string> bad = LayoutMismatches(*real_, stale);
  ASSERT_EQ(bad.size(), 1u) << ::testing::PrintToString(bad);
  EXPECT_NE(bad[0].find("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: assumed 208 bytes"),
            std::string::npos) << bad[0];
  // The real walker steps by Kernel10's 216, into the middle of the record written after the
  // Kernel9 at 208, reads a field there as a kind and gives up: nothing after it is seen.
  EXPECT_NE(bad[0].find("real walk 0:kind10 end=" + std::to_string(CUPTI_ERROR_INVALID_KIND)),
            std::string::npos) << bad[0];
}

TEST_F(RealCuptiLayoutTest, FakeRecordSizesAreTheRealOnes) {
  for (const ParsedKind& k : kParsedKinds) {
    RecordBuffer b;
    b.Append(k.kind, fake_cupti::RecordSize(k.kind));
    b.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
    const Walk w = WalkBuffer(real_->next_record, b.data(), b.size());
    ASSERT_EQ(w.offsets.size(), 2u) << k.name << ": " << Describe(w);
    EXPECT_EQ(w.offsets[1], fake_cupti::Padded(fake_cupti::RecordSize(k.kind))) << k.name;
  }
}

// Random buffers as CUPTI hands them over, and as they arrive damaged: cut short by validSize
// (inside a record or on a boundary) or holding a kind the library does not know.
struct Case {
  RecordBuffer buffer;
  size_t valid_bytes = 0;
  std::string what;
};

Case RandomCase(std::mt19937& rng) {
  Case c;
  std::uniform_int_distribution<int> count(1, kMaxRecordsPerCase);
  std::uniform_int_distribution<size_t> pick(0, std::size(kParsedKinds) - 1);
  std::uniform_int_distribution<int> damage(0, 9);
  const int n = count(rng);
  const int unknown_at = damage(rng) == 0 ? std::uniform_int_distribution<int>(0, n - 1)(rng) : -1;
  for (int i = 0; i < n; ++i) {
    const ParsedKind& k = kParsedKinds[pick(rng)];
    if (i == unknown_at) {
      c.buffer.Append(kUnknownKind, sizeof(CUpti_ActivityAPI));
      c.what += "UNKNOWN ";
    } else {
      c.buffer.Append(k.kind, k.bytes);
      c.what += std::to_string(static_cast<int>(k.kind)) + " ";
    }
  }
  c.valid_bytes = c.buffer.size();
  switch (damage(rng)) {
    case 0:  // cut inside the buffer at any byte
      c.valid_bytes = std::uniform_int_distribution<size_t>(0, c.buffer.size())(rng);
      break;
    case 1:  // cut on the boundary before the last record
      c.valid_bytes = c.buffer.offsets().back();
      break;
    case 2:  // the last record's kind only, the rest missing
      c.valid_bytes = c.buffer.offsets().back() + sizeof(CUpti_ActivityKind);
      break;
    default:
      break;
  }
  c.what += "valid=" + std::to_string(c.valid_bytes) + "/" + std::to_string(c.buffer.size());
  return c;
}

TEST_F(RealCuptiLayoutTest, FakeWalkerAgreesWithTheRealOneRecordByRecordOnRandomMixes) {
  std::mt19937 rng(20261125);  // fixed: a failure names its case and reproduces
  for (int i = 0; i < kPropertyCases; ++i) {
    Case c = RandomCase(rng);
    const Walk real = WalkBuffer(real_->next_record, c.buffer.data(), c.valid_bytes);
    const Walk fake = WalkBuffer(&cuptiActivityGetNextRecord, c.buffer.data(), c.valid_bytes);
    ASSERT_EQ(fake, real) << "case " << i << " [" << c.what << "]\n real: " << Describe(real)
                          << "\n fake: " << Describe(fake);
  }
}

TEST_F(RealCuptiLayoutTest, TheFakeIsTheLibraryTheTestBinaryLinks) {
  // The oracle is only an oracle if the two walkers are different code.
  EXPECT_NE(reinterpret_cast<void*>(real_->next_record),
            reinterpret_cast<void*>(&cuptiActivityGetNextRecord));
}

}  // namespace
}  // namespace gpuspy::inject
