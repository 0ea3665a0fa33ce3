// Evidence is data first: the text of a measured fact is rendered from its number and unit.
#include "analysis/evidence.h"

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

TEST(Evidence, EachUnitRendersItsOwnWay) {
  EXPECT_EQ(Render(Ns(850)), "850 ns");
  EXPECT_EQ(Render(Ns(40'000)), "40.0 us");  // not "0.0 ms"
  EXPECT_EQ(Render(Ns(18'112'000)), "18.1 ms");
  EXPECT_EQ(Render(Ns(2'500'000'000)), "2500.0 ms");
  EXPECT_EQ(Render(SignedNs(1'200'000)), "+1.2 ms");
  EXPECT_EQ(Render(SignedNs(-300'000)), "-300.0 us");
  EXPECT_EQ(Render(Ns(-300'000)), "-300.0 us");  // a negative duration keeps its sign
  EXPECT_EQ(Render(Bytes(512)), "512 B");
  EXPECT_EQ(Render(Bytes(3 << 20)), "3.0 MiB");
  EXPECT_EQ(Render(SignedBytes(-(64 << 20))), "-64.0 MiB");
  EXPECT_EQ(Render(SignedBytes(0)), "+0 B");
  EXPECT_EQ(Render(Count(42)), "42");
  EXPECT_EQ(Render(Fraction(0.374)), "37%");
  EXPECT_EQ(Render(Ratio(2.4)), "2.40x");
  EXPECT_EQ(Render(BytesPerSecond(12.34e9)), "12.3 GB/s");
}

TEST(Evidence, AMeasuredFactCarriesItsNumberUnitAndText) {
  v1::Finding f;
  AddEvidence(&f, "host_blocked", Ns(18'112'000), " (42% of step)");
  AddEvidence(&f, "blocking_api", "cudaStreamSynchronize x3 = ", Ns(18'000'000));
  ASSERT_EQ(f.evidence_size(), 2);
  EXPECT_EQ(f.evidence(0).key(), "host_blocked");
  EXPECT_EQ(f.evidence(0).quantity(), 18'112'000);  // unrounded, in the unit
  EXPECT_EQ(f.evidence(0).unit(), "ns");
  EXPECT_EQ(f.evidence(0).value(), "18.1 ms (42% of step)");
  EXPECT_EQ(f.evidence(1).value(), "cudaStreamSynchronize x3 = 18.0 ms");
  EXPECT_EQ(f.evidence(1).quantity(), 18'000'000);
}

TEST(Evidence, TextOnlyFactsHaveNoUnit) {
  v1::Finding f;
  AddEvidence(&f, "call_site", std::string("train.py:57 x8"));
  ASSERT_EQ(f.evidence_size(), 1);
  EXPECT_EQ(f.evidence(0).value(), "train.py:57 x8");
  EXPECT_EQ(f.evidence(0).unit(), "");
  EXPECT_EQ(f.evidence(0).quantity(), 0);
}

}  // namespace
}  // namespace gpuspy::analysis
