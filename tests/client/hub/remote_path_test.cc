#include "client/hub/remote_path.h"

#include <gtest/gtest.h>

#include <string>

namespace xet {
namespace {

TEST(RemotePathTest, ParsesBucketRootAndPaths) {
  auto r = ParseRemotePath("hf://buckets/team/data");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->ns, "team");
  EXPECT_EQ(r->bucket, "data");
  EXPECT_EQ(r->path, "");
  EXPECT_FALSE(r->trailing_slash);
  EXPECT_EQ(r->BucketId(), "team/data");
  EXPECT_EQ(r->ToString(), "hf://buckets/team/data");

  r = ParseRemotePath("hf://buckets/team/data/");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->path, "");
  EXPECT_TRUE(r->trailing_slash);
  EXPECT_EQ(r->ToString(), "hf://buckets/team/data/");

  r = ParseRemotePath("hf://buckets/my-org/ckpt.v2/runs/a/model.safetensors");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->ns, "my-org");
  EXPECT_EQ(r->bucket, "ckpt.v2");
  EXPECT_EQ(r->path, "runs/a/model.safetensors");
  EXPECT_FALSE(r->trailing_slash);
  EXPECT_EQ(r->ToString(), "hf://buckets/my-org/ckpt.v2/runs/a/model.safetensors");

  r = ParseRemotePath("hf://buckets/a/b/dir/sub/");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->path, "dir/sub");
  EXPECT_TRUE(r->trailing_slash);
  EXPECT_EQ(r->ToString(), "hf://buckets/a/b/dir/sub/");

  // UTF-8 and spaces are fine in paths.
  r = ParseRemotePath("hf://buckets/a/b/d\xC3\xA9j\xC3\xA0 vu/x y.bin");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->path, "d\xC3\xA9j\xC3\xA0 vu/x y.bin");
}

TEST(RemotePathTest, IsRemotePathLooksAtTheSchemeOnly) {
  EXPECT_TRUE(IsRemotePath("hf://buckets/a/b"));
  EXPECT_TRUE(IsRemotePath("hf://anything"));
  EXPECT_FALSE(IsRemotePath("./hf://buckets/a/b"));
  EXPECT_FALSE(IsRemotePath("s3://bucket/key"));
  EXPECT_FALSE(IsRemotePath("/tmp/file"));
  EXPECT_FALSE(IsRemotePath(""));
}

void ExpectInvalid(const std::string& arg, const std::string& needle) {
  auto r = ParseRemotePath(arg);
  ASSERT_FALSE(r.ok()) << "accepted: " << arg;
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find(needle), std::string::npos)
      << "message for " << arg << ": " << r.status().message();
  // One line, no raw control characters echoed back.
  for (char c : r.status().message()) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << r.status().message();
  }
}

TEST(RemotePathTest, RejectsOtherSchemesAndShapes) {
  ExpectInvalid("s3://bucket/key", "not a remote path");
  ExpectInvalid("hf:/buckets/a/b", "not a remote path");
  ExpectInvalid("HF://buckets/a/b", "not a remote path");
  ExpectInvalid("hf://datasets/a/b", "only bucket paths");
  ExpectInvalid("hf://a/b", "only bucket paths");
  ExpectInvalid("hf://buckets", "only bucket paths");
  ExpectInvalid("hf://buckets/", "NAMESPACE/BUCKET");
  ExpectInvalid("hf://buckets/team", "NAMESPACE/BUCKET");
  ExpectInvalid("hf://buckets/team/", "bucket name is empty");
  ExpectInvalid("hf://buckets//b", "namespace is empty");
}

TEST(RemotePathTest, RejectsInvalidNames) {
  ExpectInvalid("hf://buckets/te am/b", "namespace");
  ExpectInvalid("hf://buckets/a\nb/c", "namespace");
  ExpectInvalid("hf://buckets/a/b\r\x1b[2K/c", "bucket name");
  ExpectInvalid("hf://buckets/a/b$c", "bucket name");
  ExpectInvalid("hf://buckets/../b", "namespace");
  ExpectInvalid("hf://buckets/a/..", "bucket name");
  ExpectInvalid("hf://buckets/a/-b", "may not start or end");
  ExpectInvalid("hf://buckets/a/b.", "may not start or end");
  ExpectInvalid("hf://buckets/a/b..c", "'..'");
  ExpectInvalid("hf://buckets/" + std::string(97, 'n') + "/b", "longer than 96");
  ExpectInvalid("hf://buckets/a/" + std::string(97, 'b'), "longer than 96");
}

TEST(RemotePathTest, RejectsHostilePaths) {
  ExpectInvalid("hf://buckets/a/b//", "path is empty");
  ExpectInvalid("hf://buckets/a/b//x", "may not start with '/'");
  ExpectInvalid("hf://buckets/a/b/x//y", "'//'");
  ExpectInvalid("hf://buckets/a/b/x//", "may not end with '/'");
  ExpectInvalid("hf://buckets/a/b/../etc/passwd", "'.' or '..'");
  ExpectInvalid("hf://buckets/a/b/x/./y", "'.' or '..'");
  ExpectInvalid("hf://buckets/a/b/x/..", "'.' or '..'");
  ExpectInvalid("hf://buckets/a/b/..", "'.' or '..'");
  ExpectInvalid("hf://buckets/a/b/x\\y", "'\\'");
  ExpectInvalid(std::string("hf://buckets/a/b/x\0y", 20), "control");
  ExpectInvalid("hf://buckets/a/b/x\ny", "control");
  ExpectInvalid("hf://buckets/a/b/x\x1b[31my", "control");
  ExpectInvalid("hf://buckets/a/b/x\xC3", "UTF-8");
  ExpectInvalid("hf://buckets/a/b/\xC0\xAF", "UTF-8");      // overlong '/'
  ExpectInvalid("hf://buckets/a/b/\xED\xA0\x80", "UTF-8");  // a surrogate
  ExpectInvalid("hf://buckets/a/b/" + std::string(1025, 'x'), "longer than 1024");
  // The longest path accepted.
  EXPECT_TRUE(ParseRemotePath("hf://buckets/a/b/" + std::string(1024, 'x')).ok());
}

TEST(RemotePathTest, ErrorMessagesQuoteLongArgumentsShortly) {
  const std::string arg = "hf://buckets/a/b/" + std::string(5000, 'x');
  auto r = ParseRemotePath(arg);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.status().message().size(), 400u);
}

}  // namespace
}  // namespace xet
