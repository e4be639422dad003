// ParseMigrateState / FormatMigrateState (store/ops/migrate_state.h): round trip, and every
// malformed, truncated, oversized or hostile state refused with one line.
#include "store/ops/migrate_state.h"

#include <gtest/gtest.h>

#include <string>

namespace xet {
namespace {

TEST(MigrateStateTest, AFormattedStateParsesBackUnchanged) {
  const MigrateState s{
      "/data/index.sqlite + /data/objects", "postgres://u@h/db + s3://b/p", {INT64_MAX, 17}};
  const std::string text = FormatMigrateState(s);
  EXPECT_EQ(text.back(), '\n');
  auto back = ParseMigrateState(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
}

TEST(MigrateStateTest, UnknownFieldsAreIgnored) {
  auto s =
      ParseMigrateState(R"({"from":"a","to":"b","xorbs_after":1,"files_after":2,"later":[1,2]})");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->checkpoint.xorbs_after, 1);
  EXPECT_EQ(s->checkpoint.files_after, 2);
}

TEST(MigrateStateTest, MalformedStatesAreRefused) {
  const std::string good = R"({"from":"a","to":"b","xorbs_after":1,"files_after":2})";
  for (const std::string& bad : {
           std::string(),                                                 // empty
           good.substr(0, good.size() - 1),                               // truncated
           std::string("[1,2]"),                                          // not an object
           std::string(R"({"to":"b","xorbs_after":1,"files_after":2})"),  // no from
           std::string(R"({"from":3,"to":"b","xorbs_after":1,"files_after":2})"),
           std::string(R"({"from":"a","to":"b","xorbs_after":-1,"files_after":2})"),
           std::string(R"({"from":"a","to":"b","xorbs_after":1.5,"files_after":2})"),
           std::string(R"({"from":"a","to":"b","xorbs_after":"1","files_after":2})"),
           std::string(R"({"from":"a","to":"b","xorbs_after":9223372036854775808,)"
                       R"("files_after":2})"),
           std::string(R"({"from":"a","to":"b","xorbs_after":1})"),  // no files_after
           "{\"from\":\"" + std::string(70'000, 'x') +
               "\",\"to\":\"b\",\"xorbs_after\":1,"
               "\"files_after\":2}",  // oversized
       }) {
    auto s = ParseMigrateState(bad);
    EXPECT_FALSE(s.ok()) << bad.substr(0, 80);
    if (!s.ok()) {
      EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument);
      EXPECT_NE(s.status().message().find("not a migrate state file"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace xet
