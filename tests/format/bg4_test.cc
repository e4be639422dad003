// BG4 byte grouping: agreement with the spec's definition and exact inversion.
#include "format/bg4.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "support/test_support.h"

namespace xet {
namespace {

// The spec's definition, written naively: 4 buffers, byte i goes to buffer i % 4, then the
// buffers are concatenated in order.
std::vector<uint8_t> NaiveGroup(const std::vector<uint8_t>& in) {
  std::vector<uint8_t> groups[4];
  for (size_t i = 0; i < in.size(); ++i) groups[i % 4].push_back(in[i]);
  std::vector<uint8_t> out;
  for (const auto& g : groups) out.insert(out.end(), g.begin(), g.end());
  return out;
}

std::vector<uint8_t> Group(const std::vector<uint8_t>& in) {
  std::vector<uint8_t> out(in.size());
  Bg4Group(in, out);
  return out;
}

std::vector<uint8_t> Ungroup(const std::vector<uint8_t>& in) {
  std::vector<uint8_t> out(in.size());
  Bg4Ungroup(in, out);
  return out;
}

TEST(Bg4, SpecExampleWithRemainder) {
  // A1..A4 B1..B4 C1..C4 then 3 remainder bytes D1 D2 D3: one each to groups 1-3.
  const std::vector<uint8_t> in = {0xA1, 0xA2, 0xA3, 0xA4, 0xB1, 0xB2, 0xB3, 0xB4,
                                   0xC1, 0xC2, 0xC3, 0xC4, 0xD1, 0xD2, 0xD3};
  const std::vector<uint8_t> want = {0xA1, 0xB1, 0xC1, 0xD1, 0xA2, 0xB2, 0xC2, 0xD2,
                                     0xA3, 0xB3, 0xC3, 0xD3, 0xA4, 0xB4, 0xC4};
  EXPECT_EQ(Group(in), want);
  EXPECT_EQ(Ungroup(want), in);
}

TEST(Bg4, TinyInputs) {
  EXPECT_TRUE(Group({}).empty());
  EXPECT_EQ(Group({7}), std::vector<uint8_t>({7}));
  EXPECT_EQ(Group({1, 2}), std::vector<uint8_t>({1, 2}));
  EXPECT_EQ(Group({1, 2, 3, 4, 5, 6}), std::vector<uint8_t>({1, 5, 2, 6, 3, 4}));
}

TEST(Bg4, MatchesSpecAndInvertsExactlyForSizes0To1000) {
  for (size_t n = 0; n <= 1000; ++n) {
    const auto in = testing::RandomBytes(n, n + 1);
    const auto grouped = Group(in);
    ASSERT_EQ(grouped, NaiveGroup(in)) << "n=" << n;
    ASSERT_EQ(Ungroup(grouped), in) << "n=" << n;
  }
}

TEST(Bg4, LargeSizesAllRemainders) {
  for (size_t base : {size_t{65536}, size_t{131072} - 8}) {
    for (size_t rem = 0; rem < 8; ++rem) {
      const size_t n = base + rem;
      const auto in = testing::RandomBytes(n, n);
      const auto grouped = Group(in);
      ASSERT_EQ(grouped, NaiveGroup(in)) << "n=" << n;
      ASSERT_EQ(Ungroup(grouped), in) << "n=" << n;
    }
  }
}

TEST(Bg4, UnalignedSpans) {
  // The SIMD paths use unaligned loads and stores: run them on odd addresses.
  const auto backing = testing::RandomBytes(4099, 3);
  std::vector<uint8_t> out_backing(4099);
  const std::span<const uint8_t> in(backing.data() + 1, 4097);
  const std::span<uint8_t> out(out_backing.data() + 1, 4097);
  Bg4Group(in, out);
  const std::vector<uint8_t> in_vec(in.begin(), in.end());
  EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.end()), NaiveGroup(in_vec));
  std::vector<uint8_t> back_backing(4101);
  const std::span<uint8_t> back(back_backing.data() + 3, 4097);
  Bg4Ungroup(out, back);
  EXPECT_EQ(std::vector<uint8_t>(back.begin(), back.end()), in_vec);
}

}  // namespace
}  // namespace xet
