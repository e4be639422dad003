// WriteDecimal against std::to_chars: every power-of-ten boundary, the 32-bit edge, the
// 64-bit maximum and a million pseudo-random values of every magnitude.
#include "common/decimal.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace xet {
namespace {

std::string Ours(uint64_t v) {
  char buf[32];
  std::memset(buf, 'x', sizeof(buf));
  char* end = WriteDecimal(buf, v);
  EXPECT_EQ(buf[end - buf], 'x') << v;  // nothing written past the end it returned
  return std::string(buf, end);
}

std::string Reference(uint64_t v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
}

TEST(Decimal, MatchesToCharsAtEveryBoundary) {
  std::vector<uint64_t> values = {0, std::numeric_limits<uint32_t>::max(), uint64_t{1} << 32,
                                  std::numeric_limits<uint64_t>::max()};
  for (uint64_t p = 1; p <= 10'000'000'000'000'000'000ull / 10; p *= 10) {
    for (uint64_t d : {p - 1, p, p + 1, 10 * p - 1}) values.push_back(d);
  }
  for (uint64_t v : values) EXPECT_EQ(Ours(v), Reference(v)) << v;
}

TEST(Decimal, MatchesToCharsOnRandomValuesOfEveryMagnitude) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 1'000'000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);
    ASSERT_EQ(Ours(v), Reference(v)) << v;
  }
}

}  // namespace
}  // namespace xet
