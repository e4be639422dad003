#include "mount/extent_set.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace xet {
namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

TEST(ExtentSet, EmptySetIsOneGap) {
  ExtentSet s;
  EXPECT_EQ(s.Gaps(10, 20), (Ranges{{10, 20}}));
  EXPECT_TRUE(s.Gaps(5, 5).empty());
  EXPECT_TRUE(s.Covers(7, 7));
  EXPECT_FALSE(s.Covers(7, 8));
}

TEST(ExtentSet, AddMergesTouchingAndOverlapping) {
  ExtentSet s;
  s.Add(10, 20);
  s.Add(20, 30);  // touching
  EXPECT_EQ(s.extent_count(), 1u);
  s.Add(40, 50);
  s.Add(25, 45);  // bridges both
  EXPECT_EQ(s.extent_count(), 1u);
  EXPECT_TRUE(s.Covers(10, 50));
  EXPECT_EQ(s.Gaps(0, 60), (Ranges{{0, 10}, {50, 60}}));
  s.Add(5, 5);  // empty: ignored
  EXPECT_EQ(s.extent_count(), 1u);
}

TEST(ExtentSet, GapsBetweenExtents) {
  ExtentSet s;
  s.Add(10, 20);
  s.Add(30, 40);
  EXPECT_EQ(s.Gaps(0, 50), (Ranges{{0, 10}, {20, 30}, {40, 50}}));
  EXPECT_EQ(s.Gaps(15, 35), (Ranges{{20, 30}}));
  EXPECT_TRUE(s.Gaps(12, 18).empty());
}

TEST(ExtentSet, TruncateCutsTheLastExtent) {
  ExtentSet s;
  s.Add(0, 10);
  s.Add(20, 30);
  s.TruncateTo(25);
  EXPECT_EQ(s.Gaps(0, 40), (Ranges{{10, 20}, {25, 40}}));
  s.TruncateTo(20);
  EXPECT_EQ(s.extent_count(), 1u);
  s.TruncateTo(0);
  EXPECT_EQ(s.extent_count(), 0u);
}

// Against a byte map: random adds and truncates, then every gap query agrees.
TEST(ExtentSet, MatchesAByteMap) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    ExtentSet s;
    std::vector<bool> bytes(200, false);
    for (int op = 0; op < 30; ++op) {
      const uint64_t a = rng() % 200, b = rng() % 200;
      if (rng() % 5 == 0) {
        s.TruncateTo(a);
        for (uint64_t i = a; i < 200; ++i) bytes[i] = false;
      } else {
        s.Add(std::min(a, b), std::max(a, b));
        for (uint64_t i = std::min(a, b); i < std::max(a, b); ++i) bytes[i] = true;
      }
    }
    Ranges expected;
    for (uint64_t i = 0; i < 200; ++i) {
      if (bytes[i]) continue;
      if (!expected.empty() && expected.back().second == i) {
        expected.back().second = i + 1;
      } else {
        expected.emplace_back(i, i + 1);
      }
    }
    EXPECT_EQ(s.Gaps(0, 200), expected) << "round " << round;
  }
}

}  // namespace
}  // namespace xet
