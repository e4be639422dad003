// IngestShard over a real object store and index, with the chunk tables read through a
// shared XorbRecordCache (as the server does): the cache serves validation, but existence,
// visibility and every range check still decide.
#include "server/cas/shard_ingest.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

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

  // Ingests `shard_bytes` as an uploader who can read `readable` and writes to "team".
  Result<ShardIngestResult> Ingest(const std::string& shard_bytes,
                                   std::vector<Scope> readable = {"team"}) {
    ShardIngestOptions opts;
    opts.visible_scopes = readable;
    opts.scope = "team";
    opts.xorb_records = cache_.get();
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

}  // namespace
}  // namespace xet
