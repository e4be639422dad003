#include "server/json_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace xet {
namespace {

std::string Nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonParseTest, ParsesTheSameDocumentAsTheLibrary) {
  const std::string text = R"( {"a": [1, 2.5, "x", null, true], "b": {"c": {}}} )";
  auto parsed = ParseClientJson(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, nlohmann::json::parse(text));
  EXPECT_EQ(ParseClientJson("42").value(), nlohmann::json(42));
}

TEST(JsonParseTest, DepthLimitIsInclusive) {
  EXPECT_TRUE(ParseClientJson(Nested(kMaxClientJsonDepth)).ok());
  auto deep = ParseClientJson(Nested(kMaxClientJsonDepth + 1));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(deep.status().message().find("deeper than"), std::string::npos);
  EXPECT_TRUE(ParseClientJson("[[]]", 2).ok());
  EXPECT_FALSE(ParseClientJson("[[]]", 1).ok());
  EXPECT_FALSE(ParseClientJson(R"({"a":{"b":1}})", 1).ok());
}

TEST(JsonParseTest, ABracketBombFailsWithoutBuildingItsDocument) {
  // 8 MiB of '[': the unbounded parser would build ~8 million nested arrays first.
  auto r = ParseClientJson(std::string(8 << 20, '['));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deeper than"), std::string::npos);
}

TEST(JsonParseTest, MalformedTruncatedAndTrailingInputFailWithAMessage) {
  for (const std::string& text :
       std::vector<std::string>{"", " ", "{", R"({"a":)", R"({"a":1,})", "[1,2", "nul", "1 2",
                                "{} x", "\"\\u12\"", std::string("\"a\0b\"", 5), "\xff"}) {
    auto r = ParseClientJson(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << text;
    EXPECT_FALSE(r.status().message().empty()) << text;
  }
}

}  // namespace
}  // namespace xet
