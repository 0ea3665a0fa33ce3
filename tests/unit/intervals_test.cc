// Interval arithmetic: unions, intersections, differences and gaps over [start, end) spans.
#include "analysis/intervals.h"

#include <bitset>
#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

IntervalSet Set(std::vector<Interval> v) { return IntervalSet::Union(std::move(v)); }

TEST(IntervalUnion, MergesOverlappingUnsortedIntervalsAndDropsEmptyOnes) {
  const IntervalSet s = Set({{50, 60}, {10, 20}, {15, 30}, {40, 40}, {45, 41}, {12, 14}});
  EXPECT_THAT(s.intervals(), ElementsAre(Interval{10, 30}, Interval{50, 60}));
  EXPECT_EQ(s.TotalLength(), 30);
  EXPECT_FALSE(s.empty());
}

TEST(IntervalUnion, TouchingIntervalsBecomeOne) {
  EXPECT_THAT(Set({{5, 10}, {0, 5}}).intervals(), ElementsAre(Interval{0, 10}));
}

TEST(IntervalUnion, ContainedIntervalDoesNotShrinkItsContainer) {
  EXPECT_THAT(Set({{0, 100}, {10, 20}}).intervals(), ElementsAre(Interval{0, 100}));
  EXPECT_THAT(Set({{10, 20}, {0, 100}, {30, 40}}).intervals(), ElementsAre(Interval{0, 100}));
}

TEST(IntervalUnion, OnlyEmptyInputGivesEmptySet) {
  EXPECT_TRUE(Set({}).empty());
  EXPECT_TRUE(Set({{3, 3}, {9, 2}}).empty());
  EXPECT_EQ(Set({{3, 3}}).TotalLength(), 0);
}

TEST(IntervalUnion, NegativeTimesWork) {
  EXPECT_THAT(Set({{-10, -5}, {-7, 2}}).intervals(), ElementsAre(Interval{-10, 2}));
}

TEST(IntervalLength, EmptyOrReversedIntervalHasZeroLength) {
  EXPECT_EQ((Interval{5, 9}.length()), 4);
  EXPECT_EQ((Interval{9, 5}.length()), 0);
  EXPECT_EQ((Interval{5, 5}.length()), 0);
}

TEST(IntervalClip, KeepsOnlyTheWindow) {
  const IntervalSet s = Set({{0, 10}, {20, 30}, {40, 50}});
  EXPECT_THAT(s.Clip({5, 45}).intervals(),
              ElementsAre(Interval{5, 10}, Interval{20, 30}, Interval{40, 45}));
  EXPECT_THAT(s.Clip({10, 20}).intervals(), IsEmpty());  // touching only
  EXPECT_THAT(s.Clip({60, 70}).intervals(), IsEmpty());
}

TEST(IntervalIntersect, OverlapsOnly) {
  const IntervalSet a = Set({{0, 10}, {20, 30}});
  const IntervalSet b = Set({{5, 25}, {28, 40}});
  EXPECT_THAT(a.Intersect(b).intervals(),
              ElementsAre(Interval{5, 10}, Interval{20, 25}, Interval{28, 30}));
  EXPECT_EQ(a.Intersect(b).TotalLength(), b.Intersect(a).TotalLength());
}

TEST(IntervalIntersect, TouchingAndDisjointGiveNothing) {
  EXPECT_TRUE(Set({{0, 10}}).Intersect(Set({{10, 20}})).empty());
  EXPECT_TRUE(Set({{0, 10}}).Intersect(Set({{30, 40}})).empty());
  EXPECT_TRUE(Set({{0, 10}}).Intersect(IntervalSet{}).empty());
}

TEST(IntervalIntersect, OneIntervalSpanningMany) {
  const IntervalSet many = Set({{1, 2}, {3, 4}, {5, 6}, {8, 12}});
  EXPECT_THAT(Set({{0, 10}}).Intersect(many).intervals(),
              ElementsAre(Interval{1, 2}, Interval{3, 4}, Interval{5, 6}, Interval{8, 10}));
  EXPECT_THAT(many.Intersect(Set({{0, 10}})).intervals(),
              ElementsAre(Interval{1, 2}, Interval{3, 4}, Interval{5, 6}, Interval{8, 10}));
}

TEST(IntervalSubtract, TouchingIntervalRemovesNothing) {
  EXPECT_THAT(Set({{10, 20}}).Subtract(Set({{0, 10}, {20, 30}})).intervals(),
              ElementsAre(Interval{10, 20}));
}

TEST(IntervalSubtract, ContainedHoleSplitsInTwo) {
  EXPECT_THAT(Set({{0, 100}}).Subtract(Set({{40, 60}})).intervals(),
              ElementsAre(Interval{0, 40}, Interval{60, 100}));
}

TEST(IntervalSubtract, ContainingIntervalRemovesEverything) {
  EXPECT_TRUE(Set({{40, 60}}).Subtract(Set({{0, 100}})).empty());
  EXPECT_TRUE(Set({{40, 60}}).Subtract(Set({{40, 60}})).empty());
}

TEST(IntervalSubtract, DisjointRemovesNothing) {
  EXPECT_THAT(Set({{0, 10}, {50, 60}}).Subtract(Set({{20, 30}})).intervals(),
              ElementsAre(Interval{0, 10}, Interval{50, 60}));
  EXPECT_THAT(Set({{0, 10}}).Subtract(IntervalSet{}).intervals(), ElementsAre(Interval{0, 10}));
}

TEST(IntervalSubtract, ManyHolesAndOverhangs) {
  const IntervalSet a = Set({{0, 10}, {20, 30}, {40, 50}});
  const IntervalSet b = Set({{-5, 2}, {4, 6}, {8, 22}, {25, 26}, {29, 41}, {45, 46}});
  EXPECT_THAT(a.Subtract(b).intervals(),
              ElementsAre(Interval{2, 4}, Interval{6, 8}, Interval{22, 25}, Interval{26, 29},
                          Interval{41, 45}, Interval{46, 50}));
}

TEST(IntervalSubtract, OneHoleSpanningSeveralIntervals) {
  // A subtrahend interval reaching across several of this set's intervals must be applied to
  // each of them, not consumed by the first.
  const IntervalSet a = Set({{0, 10}, {12, 14}, {16, 30}});
  EXPECT_THAT(a.Subtract(Set({{5, 20}})).intervals(),
              ElementsAre(Interval{0, 5}, Interval{20, 30}));
}

TEST(IntervalGaps, ComplementWithinWindow) {
  const IntervalSet s = Set({{10, 20}, {30, 40}});
  EXPECT_THAT(s.GapsWithin({0, 50}).intervals(),
              ElementsAre(Interval{0, 10}, Interval{20, 30}, Interval{40, 50}));
  EXPECT_THAT(s.GapsWithin({10, 40}).intervals(), ElementsAre(Interval{20, 30}));
  EXPECT_THAT(s.GapsWithin({12, 18}).intervals(), IsEmpty());
  EXPECT_THAT(IntervalSet{}.GapsWithin({3, 7}).intervals(), ElementsAre(Interval{3, 7}));
  EXPECT_THAT(s.GapsWithin({5, 5}).intervals(), IsEmpty());
  EXPECT_THAT(s.GapsWithin({50, 0}).intervals(), IsEmpty());
}

// ---------------------------------------------------------------------------------------------
// Cross-check against a bitmap over [0, 200).

constexpr int kRange = 200;
using Bits = std::bitset<kRange>;

Bits ToBits(const std::vector<Interval>& v) {
  Bits b;
  for (const Interval& i : v) {
    for (int64_t t = std::max<int64_t>(i.start_ns, 0); t < std::min<int64_t>(i.end_ns, kRange);
         ++t) {
      b.set(static_cast<size_t>(t));
    }
  }
  return b;
}

// The canonical form of a bitmap: maximal runs of set bits.
std::vector<Interval> Runs(const Bits& b) {
  std::vector<Interval> out;
  for (int t = 0; t < kRange; ++t) {
    if (!b[t]) continue;
    int e = t;
    while (e < kRange && b[e]) ++e;
    out.push_back({t, e});
    t = e;
  }
  return out;
}

std::vector<Interval> RandomIntervals(std::mt19937& rng) {
  std::uniform_int_distribution<int> count(0, 8), point(0, kRange), len(-5, 40);
  std::vector<Interval> v(static_cast<size_t>(count(rng)));
  for (Interval& i : v) {
    i.start_ns = point(rng);
    i.end_ns = std::min(kRange, static_cast<int>(i.start_ns) + len(rng));  // some empty/reversed
  }
  return v;
}

TEST(IntervalBruteForce, MatchesABitmapOnRandomSmallIntervals) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> point(0, kRange);
  for (int iter = 0; iter < 3000; ++iter) {
    SCOPED_TRACE(iter);
    const std::vector<Interval> va = RandomIntervals(rng), vb = RandomIntervals(rng);
    const Bits a = ToBits(va), b = ToBits(vb);
    const IntervalSet sa = Set(va), sb = Set(vb);
    int64_t w0 = point(rng), w1 = point(rng);
    if (w0 > w1) std::swap(w0, w1);
    const Bits window = ToBits({{w0, w1}});

    ASSERT_EQ(sa.intervals(), Runs(a));
    ASSERT_EQ(sa.TotalLength(), static_cast<int64_t>(a.count()));
    ASSERT_EQ(sa.Intersect(sb).intervals(), Runs(a & b));
    ASSERT_EQ(sa.Subtract(sb).intervals(), Runs(a & ~b));
    ASSERT_EQ(sa.GapsWithin({w0, w1}).intervals(), Runs(window & ~a));
    ASSERT_EQ(sa.Clip({w0, w1}).intervals(), Runs(window & a));
    ASSERT_EQ(sa.Subtract(sb).TotalLength() + sa.Intersect(sb).TotalLength(), sa.TotalLength());
  }
}

}  // namespace
}  // namespace gpuspy::analysis
