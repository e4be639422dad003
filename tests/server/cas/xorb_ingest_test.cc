// IngestXorb against a real local object store and SQLite index: what it stores and what
// it reports about it.
#include "server/cas/xorb_ingest.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/store_fixture.h"
#include "support/test_support.h"
#include "support/xet_fixtures.h"

namespace xet {
namespace {

class XorbIngestTest : public testing::StoreFixture {
 protected:
  XorbIngestTest() : StoreFixture("xet-xorb-ingest") {}
};

// `stored` says this call wrote the object, so the body is exactly the stored chunk data
// (the server caches it on that promise). The same xorb uploaded again, even encoded
// differently, is reported as neither inserted nor stored, and the object is unchanged.
TEST_F(XorbIngestTest, StoredOnlyWhenThisCallWroteTheObject) {
  const auto data = testing::TextLikeBytes(300'000, 5);
  const auto plain = testing::PrepareUpload(data, CompressionPolicy::kNone);
  const auto packed = testing::PrepareUpload(data, CompressionPolicy::kLz4);
  ASSERT_EQ(plain.xorbs.size(), 1u);
  ASSERT_EQ(packed.xorbs.size(), 1u);
  const SerializedXorb& first = plain.xorbs[0];
  const SerializedXorb& again = packed.xorbs[0];
  ASSERT_EQ(first.hash, again.hash);  // the hash covers chunk hashes, not their encoding
  ASSERT_NE(first.bytes, again.bytes);

  auto r = IngestXorb(first.hash, first.bytes, "team", *index_, *objects_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->inserted);
  EXPECT_TRUE(r->stored);
  auto stored = objects_->Get(XorbKey(first.hash));
  ASSERT_TRUE(stored.ok());
  ASSERT_GT(stored->size(), first.bytes.size());  // chunk data, then the footer
  EXPECT_TRUE(std::equal(first.bytes.begin(), first.bytes.end(), stored->begin()));

  r = IngestXorb(again.hash, again.bytes, "team", *index_, *objects_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->inserted);
  EXPECT_FALSE(r->stored);
  auto after = objects_->Get(XorbKey(first.hash));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, *stored);
}

}  // namespace
}  // namespace xet
