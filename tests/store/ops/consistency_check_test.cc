// ConsistencyCheck (store/ops/consistency_check.h) on deliberately damaged stores: SQLite and
// a real PostgreSQL index, a real local object store, real xorbs and shards.
#include "store/ops/consistency_check.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "format/sha256.h"
#include "store/index_contract.h"
#include "store/index_support.h"
#include "store/ops/ops_fixture.h"
#include "store/postgres/postgres_index_backend.h"
#include "store/sqlite/sqlite_index_backend.h"
#include "support/xet_fixtures.h"

namespace xet::testing {
namespace {

class FsckTest : public StoreOpsTest {
 protected:
  void SetUp() override {
    StoreOpsTest::SetUp();
    // One file of two xorbs, stored and registered as the CAS service does.
    std::vector<uint8_t> data(600'000);
    std::mt19937_64 rng(42);
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    upload_ = PrepareUpload(data, CompressionPolicy::kPredict, 3);
    ASSERT_GE(upload_.xorbs.size(), 2u);
    std::vector<Hash> xorbs;
    for (const SerializedXorb& x : upload_.xorbs) {
      ASSERT_TRUE(objects_->Put(XorbKey(x.hash), x.bytes).ok());
      ASSERT_TRUE(index_->PutXorb(XorbRecordOf(x.hash, x.table, x.bytes.size()), "ns/b").ok());
      xorbs.push_back(x.hash);
    }
    const std::vector<uint8_t> shard(upload_.shard_bytes.begin(), upload_.shard_bytes.end());
    shard_hash_ = Hash::FromArray(Sha256Of(shard));
    ASSERT_TRUE(objects_->Put(ShardKey(shard_hash_), shard).ok());
    FileRecord f;
    f.file_hash = upload_.file_hash;
    for (const auto& t : upload_.shard.files[0].terms) {
      f.terms.push_back(
          {t.cas_hash, t.chunk_index_start, t.chunk_index_end, t.unpacked_segment_bytes});
      f.size += t.unpacked_segment_bytes;
    }
    ASSERT_TRUE(index_->CommitShard({shard_hash_, "ns/b", {f}, xorbs}).ok());
  }

  FsckReport Fsck(bool deep, bool repair) {
    ConsistencyCheck check(*index_, *objects_,
                           FsckOptions{deep, repair, std::chrono::milliseconds(0)});
    auto r = check.Run();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : FsckReport{};
  }

  static std::vector<std::string> Kinds(const FsckReport& r) {
    std::vector<std::string> kinds;
    for (const FsckProblem& p : r.problems) kinds.push_back(p.kind + " " + p.key);
    return kinds;
  }

  // An unreferenced, well-formed xorb (not part of the file).
  SerializedXorb ExtraXorb() {
    std::vector<uint8_t> data(70'000, 7);
    for (size_t i = 0; i < data.size(); i += 3) data[i] = static_cast<uint8_t>(i >> 5);
    return PrepareUpload(data).xorbs[0];
  }

  UploadArtifacts upload_;
  Hash shard_hash_;
};

TEST_P(FsckTest, ACleanStoreHasNoProblems) {
  const FsckReport r = Fsck(/*deep=*/true, /*repair=*/false);
  EXPECT_TRUE(r.problems.empty()) << ::testing::PrintToString(Kinds(r));
  EXPECT_EQ(r.xorbs_checked, upload_.xorbs.size());
  EXPECT_EQ(r.shards_checked, 1u);
  EXPECT_EQ(r.files_checked, 1u);
  EXPECT_EQ(r.objects_listed, upload_.xorbs.size() + 1);
  EXPECT_EQ(r.Remaining(), 0u);
}

TEST_P(FsckTest, AMissingObjectANeededXorbIsDataLoss) {
  const std::string key = XorbKey(upload_.xorbs[0].hash);
  ASSERT_TRUE(objects_->Delete(key).ok());
  FsckReport r = Fsck(false, false);
  EXPECT_EQ(Kinds(r), std::vector<std::string>{"xorb-object-missing " + key});
  r = Fsck(false, true);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_FALSE(r.problems[0].repaired);
  EXPECT_NE(r.problems[0].action.find("data lost"), std::string::npos) << r.problems[0].action;
  EXPECT_EQ(r.Remaining(), 1u);
  EXPECT_TRUE(*index_->HasXorb(upload_.xorbs[0].hash));  // the row stays: a file needs it
}

TEST_P(FsckTest, UnindexedXorbIsRegisteredAgainAndUnneededRowsDropped) {
  const SerializedXorb extra = ExtraXorb();
  ASSERT_TRUE(objects_->Put(XorbKey(extra.hash), extra.bytes).ok());  // object, no row
  ASSERT_TRUE(objects_->Delete(ShardKey(shard_hash_)).ok());          // row, no object
  FsckReport r = Fsck(false, false);
  EXPECT_EQ(r.Remaining(), 2u) << ::testing::PrintToString(Kinds(r));
  r = Fsck(false, true);
  EXPECT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.Remaining(), 0u) << ::testing::PrintToString(Kinds(r));
  auto rec = index_->GetXorb(extra.hash);
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ((*rec)->chunks.size(), extra.table.size());
  EXPECT_TRUE(*index_->XorbVisible(extra.hash, std::vector<Scope>{kRecoveredScope}));
  r = Fsck(true, false);
  EXPECT_TRUE(r.problems.empty()) << ::testing::PrintToString(Kinds(r));
}

TEST_P(FsckTest, DeepFindsCorruptObjectsAndRepairQuarantinesThem) {
  // A flipped byte in a needed xorb, a corrupt shard, and an unindexed corrupt xorb.
  const SerializedXorb& x = upload_.xorbs[1];
  std::vector<uint8_t> bad = x.bytes;
  bad[bad.size() / 2] ^= 0x40;
  ASSERT_TRUE(objects_->Delete(XorbKey(x.hash)).ok());
  ASSERT_TRUE(objects_->Put(XorbKey(x.hash), bad).ok());
  std::vector<uint8_t> shard(upload_.shard_bytes.begin(), upload_.shard_bytes.end());
  shard[10] ^= 1;
  ASSERT_TRUE(objects_->Delete(ShardKey(shard_hash_)).ok());
  ASSERT_TRUE(objects_->Put(ShardKey(shard_hash_), shard).ok());
  SerializedXorb extra = ExtraXorb();
  extra.bytes[extra.bytes.size() - 5] ^= 0x10;
  ASSERT_TRUE(objects_->Put(XorbKey(extra.hash), extra.bytes).ok());

  FsckReport shallow = Fsck(false, false);
  EXPECT_EQ(Kinds(shallow), std::vector<std::string>{"xorb-unindexed " + XorbKey(extra.hash)});
  FsckReport deep = Fsck(true, false);
  EXPECT_EQ(deep.Remaining(), 3u) << ::testing::PrintToString(Kinds(deep));

  FsckReport repaired = Fsck(true, true);
  EXPECT_EQ(repaired.problems.size(), 3u);
  // The corrupt needed xorb is quarantined, and its loss reported; the rest is fixed.
  EXPECT_EQ(repaired.Remaining(), 1u) << ::testing::PrintToString(Kinds(repaired));
  EXPECT_TRUE(objects_->Size("quarantine/" + XorbKey(x.hash)).ok());
  EXPECT_TRUE(objects_->Size("quarantine/" + ShardKey(shard_hash_)).ok());
  EXPECT_TRUE(objects_->Size("quarantine/" + XorbKey(extra.hash)).ok());
  EXPECT_FALSE(objects_->Size(XorbKey(extra.hash)).ok());
  EXPECT_FALSE(*index_->HasXorb(extra.hash));
  const FsckReport after = Fsck(true, false);
  EXPECT_EQ(Kinds(after), std::vector<std::string>{"xorb-object-missing " + XorbKey(x.hash)});
}

TEST_P(FsckTest, AStrayShardIsRegisteredAgainWithTheFilesTheIndexLost) {
  // The index loses the shard's row and its file's record (as a restore of an older index
  // backup would); the objects stay.
  const std::vector<Hash> file = {upload_.file_hash};
  ASSERT_EQ(index_->CollectFiles(file, INT64_MAX, false)->size(), 1u);
  const std::vector<Hash> shard = {shard_hash_};
  ASSERT_EQ(index_->RetireShards(shard, INT64_MAX, false)->size(), 1u);
  const std::vector<std::string> key = {ShardKey(shard_hash_)};
  ASSERT_TRUE(index_->ForgetPendingDeletions(key).ok());
  ASSERT_FALSE(index_->GetFile(upload_.file_hash)->has_value());
  FsckReport r = Fsck(false, false);
  EXPECT_EQ(Kinds(r), std::vector<std::string>{"shard-unindexed " + key[0]});
  r = Fsck(false, true);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_TRUE(r.problems[0].repaired) << r.problems[0].action;
  EXPECT_EQ(r.Remaining(), 0u);
  // The file record is back, as the upload registered it, and visible to the recovered
  // scope only.
  auto rec = index_->GetFile(upload_.file_hash);
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ((*rec)->size, upload_.size);
  EXPECT_EQ((*rec)->terms.size(), upload_.shard.files[0].terms.size());
  EXPECT_TRUE(*index_->FileVisible(upload_.file_hash, std::vector<Scope>{kRecoveredScope}));
  EXPECT_FALSE(*index_->FileVisible(upload_.file_hash, std::vector<Scope>{"ns/b"}));
  EXPECT_TRUE(Fsck(true, false).problems.empty());
}

TEST_P(FsckTest, AStrayShardNamingAGoneXorbIsReportedNotRegistered) {
  const std::vector<Hash> shard = {shard_hash_};
  ASSERT_EQ(index_->RetireShards(shard, INT64_MAX, false)->size(), 1u);
  const std::vector<std::string> key = {ShardKey(shard_hash_)};
  ASSERT_TRUE(index_->ForgetPendingDeletions(key).ok());
  // Its file's record goes, and then one of its xorbs (row and object).
  const std::vector<Hash> file = {upload_.file_hash};
  ASSERT_EQ(index_->CollectFiles(file, INT64_MAX, false)->size(), 1u);
  const std::vector<Hash> xorb = {upload_.xorbs[0].hash};
  ASSERT_EQ(index_->RetireXorbs(xorb, INT64_MAX, false)->size(), 1u);
  const std::vector<std::string> xorb_key = {XorbKey(upload_.xorbs[0].hash)};
  ASSERT_TRUE(index_->ForgetPendingDeletions(xorb_key).ok());
  ASSERT_TRUE(objects_->Delete(xorb_key[0]).ok());
  const FsckReport r = Fsck(false, true);
  ASSERT_EQ(r.problems.size(), 1u) << ::testing::PrintToString(Kinds(r));
  EXPECT_FALSE(r.problems[0].repaired);
  EXPECT_NE(r.problems[0].action.find("not repairable"), std::string::npos) << r.problems[0].action;
  EXPECT_FALSE(index_->GetFile(upload_.file_hash)->has_value());
}

TEST_P(FsckTest, AFileNamingAMissingXorbIsReported) {
  FileRecord f;
  f.file_hash = Hash::FromArray(Sha256Of(std::vector<uint8_t>{1, 2, 3}));
  f.terms.push_back({upload_.xorbs[0].hash, 0, 1, 10});
  f.size = 10;
  ASSERT_TRUE(index_->CommitShard({f.file_hash, "ns/b", {f}, {}}).ok());
  // Damage the index the way only a bug could: drop the xorb's rows under the files.
  const std::vector<Hash> one = {upload_.xorbs[0].hash};
  ASSERT_EQ(index_->RetireXorbs(one, INT64_MAX, false)->size(), 1u);
  const std::vector<std::string> key = {XorbKey(upload_.xorbs[0].hash)};
  ASSERT_TRUE(index_->ForgetPendingDeletions(key).ok());
  FsckReport r = Fsck(false, false);
  // The two files, the object, and the row of the test's shard (it stored no object).
  EXPECT_EQ(r.Remaining(), 4u) << ::testing::PrintToString(Kinds(r));
  r = Fsck(false, true);
  // The unindexed object was registered again, so the files are whole once more.
  EXPECT_EQ(r.Remaining(), 0u) << ::testing::PrintToString(Kinds(r));
  EXPECT_TRUE(*index_->HasXorb(upload_.xorbs[0].hash));
  EXPECT_EQ(Fsck(false, false).Remaining(), 0u);
  // Without the object, the files' loss is what remains.
  ASSERT_EQ(index_->RetireXorbs(one, INT64_MAX, false)->size(), 1u);
  ASSERT_TRUE(index_->ForgetPendingDeletions(key).ok());
  ASSERT_TRUE(objects_->Delete(key[0]).ok());
  r = Fsck(false, true);
  EXPECT_EQ(r.Remaining(), 2u) << ::testing::PrintToString(Kinds(r));
}

INSTANTIATE_TEST_SUITE_P(Sqlite, FsckTest, ::testing::Values(SqliteIndexBackend()),
                         IndexBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, FsckTest, ::testing::Values(PostgresIndexBackend()),
                         IndexBackendName);

}  // namespace
}  // namespace xet::testing
