// The bucket naming rules every route and the client apply.
#include "protocol/bucket_path.h"

#include <gtest/gtest.h>

namespace xet {
namespace {

TEST(BucketPathTest, ValidateBucketFullName) {
  EXPECT_TRUE(ValidateBucketFullName("ns/name").ok());
  EXPECT_TRUE(ValidateBucketFullName("my-org/data.v2_x").ok());
  for (const char* bad : {"", "ns", "ns/", "/name", "ns/name/x", "a/..", "ns/-x", "n s/x"}) {
    EXPECT_FALSE(ValidateBucketFullName(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace xet
