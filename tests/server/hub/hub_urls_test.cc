#include "server/hub/hub_urls.h"

#include <gtest/gtest.h>

#include "server/hub/hub_query.h"

namespace xet {
namespace {

TEST(HubUrlsTest, PercentEncode) {
  EXPECT_EQ(PercentEncode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(PercentEncode("a b/c?d&e=f%"), "a%20b%2Fc%3Fd%26e%3Df%25");
  EXPECT_EQ(PercentEncode("a b/c", /*keep_slash=*/true), "a%20b/c");
  EXPECT_EQ(PercentEncode("\xC3\xA9"), "%C3%A9");
  EXPECT_EQ(PercentEncode(std::string("\0", 1)), "%00");
}

TEST(HubUrlsTest, BucketUrls) {
  EXPECT_EQ(BucketPageUrl("http://h:8080", "a/b"), "http://h:8080/buckets/a/b");
  EXPECT_EQ(BucketApiUrl("http://h:8080/", "a/b"), "http://h:8080/api/buckets/a/b");
  EXPECT_EQ(XetReadTokenUrl("http://h", "a/b"), "http://h/api/buckets/a/b/xet-read-token");
  const Hash h = *Hash::FromHex(std::string(64, 'e'));
  EXPECT_EQ(ReconstructionInfoUrl("http://h", h), "http://h/v1/reconstructions/" + h.ToHex());
  EXPECT_EQ(NextPageLink("http://h/x?c=1"), "<http://h/x?c=1>; rel=\"next\"");
}

TEST(HubQueryTest, PageLimit) {
  EXPECT_EQ(*ParsePageLimit(std::nullopt, 100, 1000), 100u);
  EXPECT_EQ(*ParsePageLimit("5", 100, 1000), 5u);
  EXPECT_EQ(*ParsePageLimit("1000", 100, 1000), 1000u);
  EXPECT_EQ(*ParsePageLimit("999999999999", 100, 1000), 1000u);  // lowered to the maximum
  for (const char* bad : {"", "0", "-1", "1.5", "abc", "10x", "1234567890123"}) {
    EXPECT_FALSE(ParsePageLimit(std::string(bad), 100, 1000).ok()) << bad;
  }
}

TEST(HubQueryTest, BoolParam) {
  EXPECT_FALSE(*ParseBoolParam(std::nullopt, "r", false));
  EXPECT_TRUE(*ParseBoolParam(std::nullopt, "r", true));
  for (const char* t : {"true", "True", "1", ""}) EXPECT_TRUE(*ParseBoolParam(t, "r", false)) << t;
  for (const char* f : {"false", "False", "0"}) EXPECT_FALSE(*ParseBoolParam(f, "r", true)) << f;
  for (const char* bad : {"yes", "TRUE ", "2"}) {
    auto r = ParseBoolParam(std::string(bad), "recursive", false);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("recursive"), std::string::npos);
  }
}

}  // namespace
}  // namespace xet
