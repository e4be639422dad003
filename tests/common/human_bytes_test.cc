// HumanBytes (common/human_bytes.h): binary units, three significant digits.
#include "common/human_bytes.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace xet {
namespace {

TEST(HumanBytes, BelowOneKibIsPlainBytes) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
}

TEST(HumanBytes, ThreeSignificantDigitsInBinaryUnits) {
  EXPECT_EQ(HumanBytes(1024), "1.00 KiB");
  EXPECT_EQ(HumanBytes(1536), "1.50 KiB");
  EXPECT_EQ(HumanBytes(10752), "10.5 KiB");  // 10.5 * 1024
  EXPECT_EQ(HumanBytes(102400), "100 KiB");  // 100 * 1024
  EXPECT_EQ(HumanBytes(uint64_t{1} << 20), "1.00 MiB");
  EXPECT_EQ(HumanBytes(uint64_t{3} << 29), "1.50 GiB");
  EXPECT_EQ(HumanBytes(uint64_t{1} << 40), "1.00 TiB");
  EXPECT_EQ(HumanBytes(UINT64_MAX), "16.0 EiB");  // 2^64 / 2^60
}

}  // namespace
}  // namespace xet
