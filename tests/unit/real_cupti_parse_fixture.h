// Shared by the real-CUPTI parse tests: the real libcupti loaded through the core's own CuptiApi
// table (as in production), a parser, and realistic constants for hand-built records.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "inject/core/activity_parser.h"
#include "inject/core/cupti_api.h"
#include "tests/unit/real_cupti.h"

namespace gpuspy::inject {

using gpuspy::testing::LoadRealCupti;
using gpuspy::testing::RecordBuffer;

// A CUPTI timestamp as a live process sees one (ns, CLOCK_REALTIME domain without a driver).
constexpr uint64_t kT0 = 1'795'591'252'305'216'489ull;
constexpr uint32_t kDevice = 2;
constexpr uint32_t kContext = 5;
constexpr uint32_t kStream = 7;
constexpr uint32_t kThread = 48213;
constexpr uint64_t kGiB = 1ull << 30;

class RealCuptiParseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    const auto* real = LoadRealCupti(&why);
    if (real == nullptr) GTEST_SKIP() << "no real CUPTI to check against: " << why;
    std::string error;
    ASSERT_TRUE(api_.Load(real->path, &error)) << "the core's CuptiApi table: " << error;
  }
  void Parse(RecordBuffer& b) {
    parser_.ParseBuffer(b.data(), b.size(), &out_);
    EXPECT_EQ(parser_.stats().records, b.offsets().size())
        << "the real walker stopped early or ran on: a record size the parser does not expect";
  }
  std::string Str(StringRef ref) const { return std::string(strings_.Get(ref)); }

  CuptiApi api_;
  StringTable strings_;
  ActivityParser parser_{&api_, &strings_};
  EventColumns out_;
};

}  // namespace gpuspy::inject
