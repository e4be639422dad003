// S3ObjectStore runs the ObjectStore contract suite (tests/store/object_store_contract.h)
// against a real S3-compatible server (s3rver, tests/support/s3_test_server.h), plus the
// S3-specific behaviour: multipart uploads, prefixes, and refusals at open.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/object_store.h"
#include "store/object_store_contract.h"
#include "store/s3/s3_object_store.h"
#include "store/s3/s3_test_options.h"
#include "support/s3_test_server.h"

namespace xet::testing {
namespace {

ObjectStoreBackend S3Backend() {
  return {"S3",
          [](const std::string& scratch_dir) -> Result<std::unique_ptr<ObjectStore>> {
            S3TestServer& server = S3TestServer::Shared();
            if (!server.started()) return Status::Unavailable("s3rver did not start");
            return OpenS3ObjectStore(S3TestOptions(server, S3TestPrefix(scratch_dir)));
          },
          /*opens_files=*/false,
          [](const std::string&) { return S3TestServer::Shared().UnfinishedUploads(); }};
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(S3, ObjectStoreContract, ::testing::Values(S3Backend()),
                         ObjectStoreBackendName);

namespace {

using Code = Status::Code;

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 13 + i / 997);
  return v;
}

class S3ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.started()); }
  std::unique_ptr<ObjectStore> Open(S3Options o) {
    auto s = OpenS3ObjectStore(std::move(o));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  S3TestServer& server_ = S3TestServer::Shared();
};

TEST_F(S3ObjectStoreTest, LargeObjectsGoUpInPartsAndReadBackWhole) {
  S3Options o = S3TestOptions(server_, "multipart");
  o.multipart_threshold = 6u << 20;
  o.part_size = 5u << 20;
  auto store = Open(o);
  ASSERT_NE(store, nullptr);
  const auto a = Pattern(7u << 20, 1), b = Pattern((5u << 20) + 123, 2);
  const std::span<const uint8_t> parts[] = {a, b};  // 12 MiB + 123: three parts
  auto put = store->PutParts("xorbs/mp/big", parts);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_TRUE(*put);
  std::vector<uint8_t> joined = a;
  joined.insert(joined.end(), b.begin(), b.end());
  auto got = store->Get("xorbs/mp/big");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == joined);
  EXPECT_EQ(*store->Size("xorbs/mp/big"), joined.size());
  // A range across the first part boundary.
  std::vector<uint8_t> out(100);
  ASSERT_TRUE(store->ReadRange("xorbs/mp/big", (5u << 20) - 50, out).ok());
  EXPECT_TRUE(std::equal(out.begin(), out.end(), joined.begin() + (5u << 20) - 50));
  EXPECT_EQ(server_.UnfinishedUploads(), std::vector<std::string>{});
  EXPECT_FALSE(*store->PutParts("xorbs/mp/big", parts));
}

TEST_F(S3ObjectStoreTest, PrefixesKeepDeploymentsApart) {
  auto one = Open(S3TestOptions(server_, "deploy-one"));
  auto two = Open(S3TestOptions(server_, "deploy-two"));
  ASSERT_TRUE(one && two);
  ASSERT_TRUE(*one->Put("shards/abc", Pattern(10, 1)));
  EXPECT_EQ(two->Size("shards/abc").status().code(), Code::kNotFound);
  EXPECT_TRUE(*two->Put("shards/abc", Pattern(20, 2)));
  EXPECT_EQ(*one->Get("shards/abc"), Pattern(10, 1));
  std::vector<std::string> keys;
  ASSERT_TRUE(one->List("",
                        [&](std::string_view k, uint64_t) {
                          keys.emplace_back(k);
                          return Status::Ok();
                        })
                  .ok());
  EXPECT_EQ(keys, std::vector<std::string>{"shards/abc"});
}

TEST_F(S3ObjectStoreTest, ATornObjectIsReplacedByTheNextPutOfItsKey) {
  // What a writer killed in the middle of a PUT body leaves on a server that stores bodies as
  // they arrive: the first bytes of the object under its content-addressed key.
  auto store = Open(S3TestOptions(server_, "torn"));
  ASSERT_TRUE(store);
  const std::vector<uint8_t> whole = Pattern(300000, 7);
  const std::vector<uint8_t> first(whole.begin(), whole.begin() + 100000);
  ASSERT_TRUE(*store->Put("xorbs/to/rn", first));
  EXPECT_TRUE(*store->Put("xorbs/to/rn", whole)) << "the torn object was kept";
  EXPECT_EQ(*store->Size("xorbs/to/rn"), whole.size());
  EXPECT_EQ(*store->Get("xorbs/to/rn"), whole);
  EXPECT_FALSE(*store->Put("xorbs/to/rn", whole));  // whole now: nothing written
}

TEST_F(S3ObjectStoreTest, OpenRefusesAMissingBucketWrongKeysAndNoServer) {
  S3Options missing = S3TestOptions(server_, "");
  missing.bucket = "no-such-bucket";
  EXPECT_EQ(OpenS3ObjectStore(missing).status().code(), Code::kNotFound);

  S3Options wrong_key = S3TestOptions(server_, "");
  wrong_key.access_key = "NOBODY";
  EXPECT_EQ(OpenS3ObjectStore(wrong_key).status().code(), Code::kPermissionDenied);

  S3Options nobody = S3TestOptions(server_, "");
  nobody.endpoint = "http://127.0.0.1:1";  // nothing listens on port 1
  const Status down = OpenS3ObjectStore(nobody).status();
  EXPECT_EQ(down.code(), Code::kUnavailable) << down.ToString();
  EXPECT_NE(down.message().find("2 attempts"), std::string::npos) << down.ToString();
}

TEST_F(S3ObjectStoreTest, ListPagesThroughMoreThanOnePage) {
  auto store = Open(S3TestOptions(server_, "paged"));
  ASSERT_NE(store, nullptr);
  // s3rver, like S3, answers at most 1,000 keys a page.
  constexpr int kKeys = 1100;
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(store->Put("xorbs/p/k" + std::to_string(i), Pattern(1, 0)).ok());
  }
  int seen = 0;
  ASSERT_TRUE(store
                  ->List("xorbs/p/",
                         [&](std::string_view, uint64_t size) {
                           EXPECT_EQ(size, 1u);
                           ++seen;
                           return Status::Ok();
                         })
                  .ok());
  EXPECT_EQ(seen, kKeys);
}

}  // namespace
}  // namespace xet::testing
