// The one median/percentile rule (analysis/stats.h): a measured value, the upper middle of an
// even sample, nearest rank for percentiles.
#include "analysis/stats.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace gpuspy::stats {
namespace {

TEST(Stats, MedianOfAnOddSampleIsItsMiddleValue) {
  EXPECT_EQ(Median(std::vector<int64_t>{9, 1, 5}), 5);
}

TEST(Stats, MedianOfAnEvenSampleIsTheUpperMiddleValueNotAMean) {
  EXPECT_EQ(Median(std::vector<int64_t>{4, 1, 3, 2}), 3);
  EXPECT_EQ(LowerMedian(std::vector<int64_t>{4, 1, 3, 2}), 2);
}

TEST(Stats, AnEmptySampleGivesZero) {
  EXPECT_EQ(Median(std::vector<int64_t>{}), 0);
  EXPECT_EQ(LowerMedian(std::vector<int64_t>{}), 0);
  EXPECT_EQ(Percentile(std::vector<double>{}, 0.9), 0.0);
}

TEST(Stats, PercentilesAreNearestRankAndClampedToTheSample) {
  std::vector<int64_t> v;
  for (int64_t i = 10; i >= 1; --i) v.push_back(i);  // 1..10, unsorted
  EXPECT_EQ(Percentile(v, 0.9), 9);   // index round(0.9 * 9) = 8
  EXPECT_EQ(Percentile(v, 0.0), 1);
  EXPECT_EQ(Percentile(v, 1.0), 10);
  EXPECT_EQ(Percentile(v, 7.0), 10);  // out of range: the maximum, not past the end
  EXPECT_EQ(v.front(), 10);           // the caller's sample is left as it was
}

}  // namespace
}  // namespace gpuspy::stats
