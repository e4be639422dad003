#include "server/request_bodies.h"

#include <gtest/gtest.h>

#include <string>

#include "server/json_parse.h"

namespace xet {
namespace {

const std::string kHashA = std::string(63, '0') + "a";
const std::string kHashB = std::string(64, 'b');

void ExpectInvalid(const Status& st, const std::string& fragment) {
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
}

std::string TooDeep() {
  return std::string(kMaxClientJsonDepth + 1, '[') + std::string(kMaxClientJsonDepth + 1, ']');
}

TEST(BucketCreateBodyTest, BlankOrEmptyObjectIsPrivate) {
  for (const std::string& body :
       std::vector<std::string>{"", " \r\n\t", "{}", R"({"region": null})"}) {
    auto r = ParseBucketCreateBody(body);
    ASSERT_TRUE(r.ok()) << body << ": " << r.status().ToString();
    EXPECT_TRUE(*r) << body;
  }
}

TEST(BucketCreateBodyTest, PrivateAndVisibility) {
  EXPECT_FALSE(ParseBucketCreateBody(R"({"private": false})").value());
  EXPECT_TRUE(ParseBucketCreateBody(R"({"private": true})").value());
  EXPECT_FALSE(ParseBucketCreateBody(R"({"visibility": "public"})").value());
  EXPECT_FALSE(ParseBucketCreateBody(R"({"private": false, "visibility": "public", "region": "x"})")
                   .value());
  ExpectInvalid(ParseBucketCreateBody(R"({"private": true, "visibility": "public"})").status(),
                "disagree");
  ExpectInvalid(ParseBucketCreateBody(R"({"private": "yes"})").status(), "\"private\"");
  ExpectInvalid(ParseBucketCreateBody(R"({"visibility": "secret"})").status(), "visibility");
  ExpectInvalid(ParseBucketCreateBody(R"({"resourceGroupId": 5})").status(), "resourceGroupId");
}

TEST(BucketCreateBodyTest, NonObjectsTruncatedAndTooDeepBodiesFail) {
  for (const std::string& body :
       std::vector<std::string>{"[]", "true", "{\"private\":", "{", TooDeep()}) {
    ExpectInvalid(ParseBucketCreateBody(body).status(), "JSON object");
  }
}

TEST(BucketMoveBodyTest, SplitsBothIds) {
  auto r = ParseBucketMoveBody(R"({"fromRepo": "a/b", "toRepo": "c/d-2", "type": "bucket"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->from_ns, "a");
  EXPECT_EQ(r->from_name, "b");
  EXPECT_EQ(r->to_ns, "c");
  EXPECT_EQ(r->to_name, "d-2");
  EXPECT_EQ(r->FromId(), "a/b");
  EXPECT_EQ(r->ToId(), "c/d-2");
}

TEST(BucketMoveBodyTest, RejectsMissingInvalidAndHostileIds) {
  ExpectInvalid(ParseBucketMoveBody(R"({"toRepo": "c/d", "type": "bucket"})").status(),
                "\"fromRepo\" must be NAMESPACE/BUCKET");
  ExpectInvalid(
      ParseBucketMoveBody(R"({"fromRepo": 1, "toRepo": "c/d", "type": "bucket"})").status(),
      "\"fromRepo\"");
  ExpectInvalid(
      ParseBucketMoveBody(R"({"fromRepo": "a/b", "toRepo": "c/../d", "type": "bucket"})").status(),
      "toRepo");
  ExpectInvalid(
      ParseBucketMoveBody(R"({"fromRepo": "a/b", "toRepo": "c/d/e", "type": "bucket"})").status(),
      "toRepo");
  ExpectInvalid(
      ParseBucketMoveBody(R"({"fromRepo": "a", "toRepo": "c/d", "type": "bucket"})").status(),
      "fromRepo");
  ExpectInvalid(
      ParseBucketMoveBody(R"({"fromRepo": "a/b", "toRepo": "c/d", "type": "model"})").status(),
      "\"type\" must be \"bucket\"");
  ExpectInvalid(ParseBucketMoveBody(R"({"fromRepo": "a/b", "toRepo": "c/d"})").status(), "type");
  for (const std::string& body : std::vector<std::string>{"", "[]", "{\"fromRepo\":", TooDeep()}) {
    ExpectInvalid(ParseBucketMoveBody(body).status(), "JSON object");
  }
}

TEST(PathsInfoBodyTest, ValidatesAndDeduplicatesInOrder) {
  auto r = ParsePathsInfoBody(R"({"paths": ["b/c.txt", "a", "b/c.txt", "é/x"]})", 10);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<std::string>{"b/c.txt", "a", "é/x"}));
  EXPECT_TRUE(ParsePathsInfoBody(R"({"paths": []})", 10).value().empty());
}

TEST(PathsInfoBodyTest, RejectsHostilePathsAndShapes) {
  for (const std::string& path : std::vector<std::string>{"../etc/passwd", "/abs", "a//b", "a/./b",
                                                          "a\\\\b", "a\\u0000b", "trailing/", ""}) {
    ExpectInvalid(ParsePathsInfoBody(R"({"paths": [")" + path + "\"]}", 10).status(),
                  "invalid path");
  }
  ExpectInvalid(ParsePathsInfoBody(R"({"paths": ["a", 1]})", 10).status(), "must hold strings");
  ExpectInvalid(ParsePathsInfoBody(R"({"paths": ["a", "b", "c"]})", 2).status(), "at most 2");
  for (const std::string& body : std::vector<std::string>{
           "", "[]", R"({"paths": "a"})", R"({"path": []})", R"({"paths": ["a")", TooDeep()}) {
    ExpectInvalid(ParsePathsInfoBody(body, 10).status(), "JSON object {\"paths\"");
  }
}

TEST(BatchReconstructionBodyTest, ReadsHashesInOrderWithoutDuplicates) {
  const std::string body = R"([{"prefix": "default", "hash": ")" + kHashB + R"("}, {"hash": ")" +
                           kHashA + R"("}, {"hash": ")" + kHashB + R"("}])";
  auto r = ParseBatchReconstructionBody(body, 10);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].ToHex(), kHashB);
  EXPECT_EQ((*r)[1].ToHex(), kHashA);
  EXPECT_TRUE(ParseBatchReconstructionBody("[]", 10).value().empty());
}

TEST(BatchReconstructionBodyTest, RejectsMalformedKeysAndTooManyFiles) {
  ExpectInvalid(ParseBatchReconstructionBody(R"([{"hash": "xyz"}])", 10).status(),
                "malformed file hash 'xyz'");
  ExpectInvalid(
      ParseBatchReconstructionBody(R"([{"prefix": "other", "hash": ")" + kHashA + R"("}])", 10)
          .status(),
      "each key must be");
  ExpectInvalid(ParseBatchReconstructionBody(R"([{"hash": 1}])", 10).status(), "each key must be");
  ExpectInvalid(ParseBatchReconstructionBody(R"(["a"])", 10).status(), "each key must be");
  ExpectInvalid(ParseBatchReconstructionBody(R"([{}, {}, {}])", 2).status(),
                "too many files in one batch (max 2)");
  for (const std::string& body : std::vector<std::string>{"", "{}", "[{\"hash\":", TooDeep()}) {
    ExpectInvalid(ParseBatchReconstructionBody(body, 10).status(), "JSON array");
  }
}

}  // namespace
}  // namespace xet
