#include "server/auth/bucket_access.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace xet {
namespace {

Principal Token(Permission perm, std::vector<Scope> scopes) {
  Principal p;
  p.token_id = "tok";
  p.permission = perm;
  p.scopes = std::move(scopes);
  return p;
}

BucketRecord Bucket(const char* ns, const char* name, bool is_private) {
  BucketRecord b;
  b.ns = ns;
  b.name = name;
  b.is_private = is_private;
  return b;
}

const BucketCaller kAnonymous{};

TEST(BucketAccessTest, ScopesCoverTheirBucketsOrEverythingWhenEmpty) {
  EXPECT_TRUE(ScopesCoverBucket(Token(Permission::kRead, {}), "any/thing"));
  const Principal p = Token(Permission::kRead, {"a/b", "c/d"});
  EXPECT_TRUE(ScopesCoverBucket(p, "a/b"));
  EXPECT_TRUE(ScopesCoverBucket(p, "c/d"));
  EXPECT_FALSE(ScopesCoverBucket(p, "a/c"));
  EXPECT_FALSE(ScopesCoverBucket(p, "a/b/c"));
  EXPECT_FALSE(ScopesCoverBucket(p, "a"));
}

TEST(BucketAccessTest, ReadRules) {
  const BucketRecord pub = Bucket("a", "pub", false);
  const BucketRecord priv = Bucket("a", "priv", true);
  EXPECT_TRUE(CanReadBucket(kAnonymous, pub));
  EXPECT_FALSE(CanReadBucket(kAnonymous, priv));
  const BucketCaller scoped{Token(Permission::kRead, {"a/priv"})};
  EXPECT_TRUE(CanReadBucket(scoped, priv));
  EXPECT_TRUE(CanReadBucket(scoped, pub));  // public: any caller
  EXPECT_FALSE(CanReadBucket(scoped, Bucket("a", "other", true)));
  const BucketCaller everything{Token(Permission::kRead, {})};
  EXPECT_TRUE(CanReadBucket(everything, Bucket("z", "z", true)));
}

TEST(BucketAccessTest, InvisibleBucketsAre401ToAnonymousAnd404Otherwise) {
  EXPECT_EQ(BucketNotVisible(kAnonymous, "a/b").code(), Status::Code::kUnauthenticated);
  const BucketCaller scoped{Token(Permission::kWrite, {"x/y"})};
  const Status st = BucketNotVisible(scoped, "a/b");
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("a/b"), std::string::npos);
}

TEST(BucketAccessTest, WriteRules) {
  EXPECT_EQ(CheckBucketWrite(kAnonymous, "a/b").code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(CheckBucketWrite(BucketCaller{Token(Permission::kRead, {"a/b"})}, "a/b").code(),
            Status::Code::kPermissionDenied);
  EXPECT_EQ(CheckBucketWrite(BucketCaller{Token(Permission::kWrite, {"a/c"})}, "a/b").code(),
            Status::Code::kPermissionDenied);
  EXPECT_TRUE(CheckBucketWrite(BucketCaller{Token(Permission::kWrite, {"a/b"})}, "a/b").ok());
  EXPECT_TRUE(CheckBucketWrite(BucketCaller{Token(Permission::kWrite, {})}, "a/b").ok());
  EXPECT_TRUE(CheckBucketWrite(BucketCaller{Token(Permission::kAdmin, {})}, "q/r").ok());
}

TEST(BucketAccessTest, IdentifyCaller) {
  const testing::TempDir dir("bucket_access");
  auto index = OpenSqliteIndex(dir.path() + "/index.sqlite");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const std::vector<uint8_t> secret(32, 7);
  TokenService tokens(**index, secret);

  HttpRequest req;
  auto anon = IdentifyBucketCaller(tokens, req);
  ASSERT_TRUE(anon.ok());
  EXPECT_TRUE(anon->anonymous());
  EXPECT_EQ(anon->token_id(), "anonymous");

  for (const char* bad :
       {"Bearer hf_0000000000000000000000000000000000000000", "Bearer junk", "Basic abc", ""}) {
    req.headers.Set("Authorization", bad);
    auto r = IdentifyBucketCaller(tokens, req);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kUnauthenticated) << bad;
  }

  auto user = tokens.CreateUserToken("u", Permission::kWrite, {"a/b"});
  ASSERT_TRUE(user.ok());
  req.headers.Set("Authorization", "Bearer " + user->secret);
  auto u = IdentifyBucketCaller(tokens, req);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  ASSERT_FALSE(u->anonymous());
  EXPECT_EQ(u->principal->scopes, std::vector<Scope>{"a/b"});
  EXPECT_EQ(u->token_id(), user->record.id);

  const std::string cas = tokens.MintCasToken("t1", Permission::kRead, "c/d", tokens.Now() + 60);
  req.headers.Set("Authorization", "Bearer " + cas);
  auto c = IdentifyBucketCaller(tokens, req);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->principal->scopes, std::vector<Scope>{"c/d"});
  EXPECT_EQ(c->principal->permission, Permission::kRead);
}

}  // namespace
}  // namespace xet
