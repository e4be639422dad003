// BucketGate: the read/write decisions and pre-body checks every bucket API service shares.
#include "server/hub/bucket_gate.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace xet {
namespace {

class BucketGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index = OpenSqliteIndex(dir_.path() + "/index.sqlite");
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    index_ = std::move(*index);
    tokens_ = std::make_unique<TokenService>(*index_, std::vector<uint8_t>(32, 7));
    gate_ = std::make_unique<BucketGate>(*index_, *tokens_);
    ASSERT_TRUE(index_->CreateBucket("ns", "pub", false, 1).ok());
    ASSERT_TRUE(index_->CreateBucket("ns", "priv", true, 1).ok());
  }
  HttpRequest WithToken(Permission perm, std::vector<Scope> scopes) {
    auto user = tokens_->CreateUserToken("u", perm, std::move(scopes));
    EXPECT_TRUE(user.ok());
    HttpRequest req;
    req.headers.Set("Authorization", "Bearer " + user->secret);
    return req;
  }
  BucketCaller Caller(const HttpRequest& req) {
    auto c = gate_->Caller(req);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return *c;
  }
  static RouteParams Names(const char* ns, const char* name) {
    return RouteParams{{"ns", ns}, {"name", name}};
  }

  testing::TempDir dir_{"bucket_gate"};
  std::unique_ptr<Index> index_;
  std::unique_ptr<TokenService> tokens_;
  std::unique_ptr<BucketGate> gate_;
};

TEST_F(BucketGateTest, ReadableBuckets) {
  const BucketCaller anonymous = Caller(HttpRequest{});
  auto pub = gate_->ReadableBucket(anonymous, Names("ns", "pub"));
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  EXPECT_EQ(pub->FullName(), "ns/pub");
  EXPECT_EQ(gate_->ReadableBucket(anonymous, Names("ns", "priv")).status().code(),
            Status::Code::kUnauthenticated);
  const BucketCaller other = Caller(WithToken(Permission::kRead, {"ns/pub"}));
  EXPECT_EQ(gate_->ReadableBucket(other, Names("ns", "priv")).status().code(),
            Status::Code::kNotFound);
  EXPECT_EQ(gate_->ReadableBucket(other, Names("ns", "absent")).status().code(),
            Status::Code::kNotFound);
  EXPECT_EQ(gate_->ReadableBucket(other, Names("n s", "pub")).status().code(),
            Status::Code::kInvalidArgument);
  const BucketCaller scoped = Caller(WithToken(Permission::kRead, {"ns/priv"}));
  EXPECT_TRUE(gate_->ReadableBucket(scoped, Names("ns", "priv")).ok());
}

TEST_F(BucketGateTest, WritableBuckets) {
  EXPECT_EQ(gate_->WritableBucket(Caller(HttpRequest{}), Names("ns", "pub")).status().code(),
            Status::Code::kUnauthenticated);
  const BucketCaller reader = Caller(WithToken(Permission::kRead, {}));
  EXPECT_EQ(gate_->WritableBucket(reader, Names("ns", "pub")).status().code(),
            Status::Code::kPermissionDenied);
  const BucketCaller writer = Caller(WithToken(Permission::kWrite, {"ns/priv", "ns/absent"}));
  EXPECT_TRUE(gate_->WritableBucket(writer, Names("ns", "priv")).ok());
  EXPECT_EQ(gate_->WritableBucket(writer, Names("ns", "pub")).status().code(),
            Status::Code::kPermissionDenied);
  EXPECT_EQ(gate_->WritableBucket(writer, Names("ns", "absent")).status().code(),
            Status::Code::kNotFound);
}

TEST_F(BucketGateTest, PreBodyChecks) {
  const HttpRequest anonymous;
  ASSERT_TRUE(gate_->CheckBucketWriter(anonymous, Names("ns", "pub")).has_value());
  EXPECT_EQ(gate_->CheckBucketWriter(anonymous, Names("ns", "pub"))->status, 401);
  const HttpRequest reader = WithToken(Permission::kRead, {});
  EXPECT_EQ(gate_->CheckBucketWriter(reader, Names("ns", "pub"))->status, 403);
  const HttpRequest writer = WithToken(Permission::kWrite, {"ns/new"});
  EXPECT_EQ(gate_->CheckBucketWriter(writer, Names("ns", "new")), std::nullopt);  // may create
  EXPECT_EQ(gate_->CheckBucketWriter(writer, Names("n s", "new"))->status, 400);

  EXPECT_EQ(gate_->CheckWriter(anonymous)->status, 401);
  EXPECT_EQ(gate_->CheckWriter(reader)->status, 403);
  EXPECT_EQ(gate_->CheckWriter(writer), std::nullopt);

  EXPECT_EQ(gate_->CheckBucketReader(anonymous, Names("ns", "pub")), std::nullopt);
  EXPECT_EQ(gate_->CheckBucketReader(anonymous, Names("ns", "priv"))->status, 401);
  EXPECT_EQ(gate_->CheckBucketReader(writer, Names("ns", "priv"))->status, 404);
}

TEST(BucketErrorResponseTest, NamesRepoNotFoundForMissingOrUnauthenticated) {
  EXPECT_EQ(BucketErrorResponse(Status::NotFound("x")).headers.Get("X-Error-Code"), "RepoNotFound");
  EXPECT_EQ(BucketErrorResponse(Status::Unauthenticated("x")).headers.Get("X-Error-Code"),
            "RepoNotFound");
  EXPECT_EQ(BucketErrorResponse(Status::PermissionDenied("x")).headers.Get("X-Error-Code"),
            std::nullopt);
}

}  // namespace
}  // namespace xet
