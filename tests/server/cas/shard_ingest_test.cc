// IngestShard over a real object store and index, with the chunk tables read through a
// shared XorbRecordCache (as the server does): the cache serves validation, but existence,
// visibility and every range check still decide.
#include "server/cas/shard_ingest.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/cache/visible_xorb_cache.h"
#include "server/cache/xorb_record_cache.h"
#include "server/cas/xorb_ingest.h"
#include "store/local/local_object_store.h"
#include "store/sqlite/sqlite_index.h"
#include "support/store_fixture.h"
#include "support/test_support.h"
#include "support/xet_fixtures.h"

namespace xet {
namespace {

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

class ShardIngestTest : public testing::StoreFixture {
 protected:
  ShardIngestTest() : StoreFixture("xet-shard-ingest") {}

  // Ingests `shard_bytes` as an uploader who can read `readable` and writes to "team";
  // `visible` is the visibility cache (none by default).
  Result<ShardIngestResult> Ingest(const std::string& shard_bytes,
                                   std::vector<Scope> readable = {"team"},
                                   VisibleXorbCache* visible = nullptr) {
    ShardIngestOptions opts;
    opts.visible_scopes = readable;
    opts.scope = "team";
    opts.xorb_records = cache_.get();
    opts.visible_xorbs = visible;
    return IngestShard(Bytes(shard_bytes), opts, *index_, *objects_);
  }
};

TEST_F(ShardIngestTest, ValidatesWithTheSharedCache) {
  const auto a = testing::PrepareUpload(testing::TextLikeBytes(600'000, 11),
                                        CompressionPolicy::kPredict, /*max_xorb_chunks=*/4);
  ASSERT_GT(a.xorbs.size(), 1u);
  StoreXorbs(a, "team");
  EXPECT_EQ(cache_->size(), 0u);

  auto r = Ingest(a.shard_bytes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->result, ShardCommitResult::kRegistered);
  EXPECT_EQ(r->num_files, 1u);
  // Every referenced chunk table was read through the cache and stays there.
  EXPECT_EQ(cache_->size(), a.xorbs.size());
  auto file = index_->GetFile(a.file_hash);
  ASSERT_TRUE(file.ok() && file->has_value());
  EXPECT_EQ((*file)->size, a.size);

  // A second upload of the same shard is validated from the cache alone.
  r = Ingest(a.shard_bytes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->result, ShardCommitResult::kAlreadyExisted);
  EXPECT_EQ(cache_->size(), a.xorbs.size());
}

TEST_F(ShardIngestTest, CachedXorbsStillNeedVisibilityAndValidRanges) {
  const auto a = testing::PrepareUpload(testing::TextLikeBytes(300'000, 12));
  StoreXorbs(a, "team");
  ASSERT_TRUE(Ingest(a.shard_bytes).ok());
  ASSERT_EQ(cache_->size(), a.xorbs.size());

  // The xorbs are cached, but an uploader who cannot read their scope cannot use them.
  auto r = Ingest(a.shard_bytes, {"other"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("upload xorbs before the shard"), std::string::npos)
      << r.status().ToString();

  // A term past the end of its (cached) xorb.
  Shard bad = a.shard;
  bad.files[0].terms[0].chunk_index_end += 1;
  r = Ingest(testing::SerializeForUpload(bad));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is outside xorb"), std::string::npos)
      << r.status().ToString();

  // A wrong verification hash against the cached chunk hashes.
  bad = a.shard;
  bad.files[0].verification[0].range_hash = Hash();
  r = Ingest(testing::SerializeForUpload(bad));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("verification hash"), std::string::npos)
      << r.status().ToString();
}

TEST_F(ShardIngestTest, RejectsAMissingXorbWithOrWithoutTheCache) {
  const auto a = testing::PrepareUpload(testing::TextLikeBytes(300'000, 13));
  const auto b = testing::PrepareUpload(testing::TextLikeBytes(300'000, 14));
  StoreXorbs(a, "team");
  ASSERT_TRUE(Ingest(a.shard_bytes).ok());

  // b's file and CAS info point at xorbs that were never uploaded.
  for (XorbRecordCache* cache : {cache_.get(), static_cast<XorbRecordCache*>(nullptr)}) {
    ShardIngestOptions opts;
    const std::vector<Scope> readable = {"team"};
    opts.visible_scopes = readable;
    opts.scope = "team";
    opts.xorb_records = cache;
    auto r = IngestShard(Bytes(b.shard_bytes), opts, *index_, *objects_);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(b.xorbs[0].hash.ToHex()), std::string::npos)
        << r.status().ToString();
  }
  auto file = index_->GetFile(b.file_hash);
  ASSERT_TRUE(file.ok());
  EXPECT_FALSE(file->has_value());
}

TEST_F(ShardIngestTest, RemembersVisibleXorbsForTheUploadersScopes) {
  const auto a = testing::PrepareUpload(testing::TextLikeBytes(600'000, 15),
                                        CompressionPolicy::kPredict, /*max_xorb_chunks=*/4);
  StoreXorbs(a, "team");
  VisibleXorbCache visible(64);
  const std::vector<Scope> readable = {"team"};
  auto r = Ingest(a.shard_bytes, readable, &visible);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(visible.size(), a.xorbs.size());
  for (const SerializedXorb& x : a.xorbs) EXPECT_TRUE(visible.Contains(x.hash, readable));
  // Refused answers are not remembered.
  r = Ingest(a.shard_bytes, {"other"}, &visible);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(visible.size(), a.xorbs.size());
}

// An answer the cache holds can be stale (the bucket was deleted or renamed since, on any
// node): the upload is refused exactly as without the cache, and nothing is registered.
TEST_F(ShardIngestTest, AStaleVisibilityAnswerNeverLetsAShardThrough) {
  const auto a = testing::PrepareUpload(testing::TextLikeBytes(300'000, 16));
  ASSERT_EQ(a.xorbs.size(), 1u);  // the one xorb the refusals name
  StoreXorbs(a, "team");
  const std::vector<Scope> other = {"other"};
  VisibleXorbCache stale(64);
  for (const SerializedXorb& x : a.xorbs) stale.Insert(x.hash, other);

  // A valid shard: refused by the commit's own check.
  auto r = Ingest(a.shard_bytes, other, &stale);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("references xorb " + a.xorbs[0].hash.ToHex() +
                                      " which was not uploaded"),
            std::string::npos)
      << r.status().ToString();
  auto file = index_->GetFile(a.file_hash);
  ASSERT_TRUE(file.ok());
  EXPECT_FALSE(file->has_value());

  // A shard that also fails validation: refused for the visibility, as without the cache.
  Shard bad = a.shard;
  bad.files[0].verification[0].range_hash = Hash();
  r = Ingest(testing::SerializeForUpload(bad), other, &stale);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("which was not uploaded"), std::string::npos)
      << r.status().ToString();
  EXPECT_EQ(r.status().message().find("verification hash"), std::string::npos)
      << r.status().ToString();
  // With a fresh answer the same broken shard is refused for what is wrong with it.
  r = Ingest(testing::SerializeForUpload(bad), {"team"}, &stale);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("verification hash"), std::string::npos)
      << r.status().ToString();
}

}  // namespace
}  // namespace xet
