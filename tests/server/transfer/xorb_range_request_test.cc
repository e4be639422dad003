// ResolveXorbRanges: each decision of a transfer GET's Range header as a Status code.
#include "server/transfer/xorb_range_request.h"

#include <gtest/gtest.h>

#include <vector>

namespace xet {
namespace {

constexpr uint64_t kDataLength = 100;

Result<std::vector<ByteRange>> Resolve(std::vector<ByteRange> signed_ranges,
                                       std::optional<std::string_view> header) {
  return ResolveXorbRanges(kDataLength, signed_ranges, header);
}

void ExpectRefused(const Result<std::vector<ByteRange>>& r, Status::Code code,
                   const std::string& message) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_EQ(r.status().message(), message);
}

TEST(ResolveXorbRanges, RangesInRequestOrder) {
  auto r = Resolve({{0, 99}}, "bytes=50-59,10-19");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<ByteRange>{{50, 59}, {10, 19}}));
}

TEST(ResolveXorbRanges, OpenEndsResolveAndEndsPastTheDataAreClamped) {
  auto open = Resolve({{0, 199}}, "bytes=90-");
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  EXPECT_EQ(*open, (std::vector<ByteRange>{{90, 99}}));
  auto clamped = Resolve({{0, 199}}, "bytes=80-150");
  ASSERT_TRUE(clamped.ok()) << clamped.status().ToString();
  EXPECT_EQ(*clamped, (std::vector<ByteRange>{{80, 99}}));
}

TEST(ResolveXorbRanges, MissingHeaderOrUnsignedRangeIsPermissionDenied) {
  ExpectRefused(Resolve({{0, 99}}, std::nullopt), Status::Code::kPermissionDenied,
                "a Range header within the signed ranges is required");
  ExpectRefused(Resolve({{10, 19}}, "bytes=10-20"), Status::Code::kPermissionDenied,
                "requested range is outside the signed ranges");
}

TEST(ResolveXorbRanges, MalformedHeaderIsInvalidArgument) {
  for (const char* header : {"bytes=", "bytes=-5", "bytes=9-3", "items=0-1", "bytes=a-b"}) {
    ExpectRefused(Resolve({{0, 99}}, header), Status::Code::kInvalidArgument,
                  "malformed Range header");
  }
  std::string many = "bytes=0-0";
  for (size_t i = 1; i <= kMaxByteRanges; ++i) many += ",0-0";
  ExpectRefused(Resolve({{0, 99}}, many), Status::Code::kInvalidArgument, "malformed Range header");
}

TEST(ResolveXorbRanges, UnsatisfiableRangesAreOutOfRange) {
  // Starting at or past the end of the data (signed bytes past it are allowed to ask).
  ExpectRefused(Resolve({{0, 199}}, "bytes=100-120"), Status::Code::kOutOfRange,
                "requested range not satisfiable");
  ExpectRefused(Resolve({{0, 199}}, "bytes=100-"), Status::Code::kOutOfRange,
                "requested range not satisfiable");
  // Overlapping ranges adding up to more than the signed set holds of the data.
  ExpectRefused(Resolve({{0, 49}}, "bytes=0-49,0-49"), Status::Code::kOutOfRange,
                "requested range not satisfiable");
  ExpectRefused(Resolve({{90, 199}}, "bytes=90-99,90-99"), Status::Code::kOutOfRange,
                "requested range not satisfiable");
}

}  // namespace
}  // namespace xet
