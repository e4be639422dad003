// The HTTP byte-range rules both sides share: parsing `Range`-style range sets, their
// limits, and the check that a requested set lies inside a signed one.
#include "protocol/byte_range.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace xet {
namespace {

TEST(ByteRangeTest, ParsesRangeSets) {
  auto r = ParseByteRanges("bytes=0-1023,2048-4095");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<ByteRange>{{0, 1023}, {2048, 4095}}));
  r = ParseByteRanges("Bytes=5-5 ,\t7-9");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<ByteRange>{{5, 5}, {7, 9}}));
  r = ParseByteRanges("bytes=9-10,0-3,2-5");  // order kept, overlap allowed
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<ByteRange>{{9, 10}, {0, 3}, {2, 5}}));
  r = ParseByteRanges("bytes=9999999999999999999-9999999999999999999");
  ASSERT_TRUE(r.ok());
  RangeParseOptions open;
  open.allow_open_end = true;
  r = ParseByteRanges("bytes=100-", open);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<ByteRange>{{100, kOpenEnd}}));
}

TEST(ByteRangeTest, RejectsBadRangeSets) {
  const char* bad[] = {
      "",
      "bytes=",
      "bytes",
      "byte=0-1",
      "items=0-1",
      " bytes=0-1",
      "bytes =0-1",
      "bytes=-5",  // suffix ranges are not supported
      "bytes=5-",  // open end not allowed by default
      "bytes=5-4",
      "bytes=a-b",
      "bytes=0x10-20",
      "bytes=+1-2",
      "bytes=1--2",
      "bytes=1-2-3",
      "bytes=1-2,",
      "bytes=,1-2",
      "bytes=1-2,,3-4",
      "bytes=1-2;3-4",
      "bytes=1 -2",
      "bytes=1- 2",
      "bytes=0-1\r\n",
      "bytes=10000000000000000000-10000000000000000001",  // 20 digits
      "bytes=0-18446744073709551616",
      "bytes=0-99999999999999999999999999999",
  };
  for (const char* s : bad) {
    EXPECT_FALSE(ParseByteRanges(s).ok()) << "'" << s << "'";
  }
  EXPECT_FALSE(ParseByteRanges(std::string_view("bytes=0-1\0", 10)).ok());
  RangeParseOptions strict;
  strict.allow_whitespace = false;
  EXPECT_FALSE(ParseByteRanges("bytes=1-2, 3-4", strict).ok());
}

TEST(ByteRangeTest, CapsRangeCount) {
  std::string s = "bytes=";
  for (int i = 0; i < 1025; ++i) s += (i ? "," : "") + std::to_string(i) + "-" + std::to_string(i);
  auto r = ParseByteRanges(s);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kResourceExhausted);
  s = s.substr(0, s.rfind(','));
  EXPECT_TRUE(ParseByteRanges(s).ok());  // 1024 ranges
}

TEST(ByteRangeTest, CheckRequestedRanges) {
  std::vector<ByteRange> signed_set = {{0, 1023}, {2048, 4095}};
  using V = std::vector<ByteRange>;
  EXPECT_TRUE(CheckRequestedRanges(signed_set, V{{0, 1023}, {2048, 4095}}));  // exact
  EXPECT_TRUE(CheckRequestedRanges(signed_set, V{{2048, 4095}}));             // one of them
  EXPECT_TRUE(CheckRequestedRanges(signed_set, V{{100, 200}}));               // sub-range
  EXPECT_TRUE(CheckRequestedRanges(signed_set, V{{3000, 4095}, {0, 0}}));     // unsorted
  EXPECT_TRUE(CheckRequestedRanges(signed_set, V{{0, 600}, {500, 1023}}));    // overlapping
  EXPECT_TRUE(CheckRequestedRanges(signed_set, V{}));
  EXPECT_FALSE(CheckRequestedRanges(signed_set, V{{0, 1024}}));     // one byte past
  EXPECT_FALSE(CheckRequestedRanges(signed_set, V{{1024, 2047}}));  // the gap
  EXPECT_FALSE(CheckRequestedRanges(signed_set, V{{1000, 3000}}));  // straddles the gap
  EXPECT_FALSE(CheckRequestedRanges(signed_set, V{{0, 10}, {4096, 4096}}));
  EXPECT_FALSE(CheckRequestedRanges(signed_set, V{{5000, 6000}}));
  EXPECT_FALSE(CheckRequestedRanges(V{}, V{{0, 0}}));
  // Adjacent and overlapping signed ranges form one authorized span.
  EXPECT_TRUE(CheckRequestedRanges(V{{100, 199}, {0, 99}}, V{{50, 150}}));
  EXPECT_TRUE(CheckRequestedRanges(V{{0, 100}, {50, 300}}, V{{0, 300}}));
  EXPECT_FALSE(CheckRequestedRanges(V{{0, 99}, {101, 200}}, V{{50, 150}}));
}

}  // namespace
}  // namespace xet
