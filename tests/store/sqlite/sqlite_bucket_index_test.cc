// SqliteIndex, bucket part, beyond the Index contract (that is
// tests/store/bucket_index_contract_test.cc): the schema migration that adds buckets, and
// the shards table following a renamed bucket.
#include <gtest/gtest.h>

#include <string>

#include "store/bucket_index_contract.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/sqlite_index_backend.h"

namespace xet::testing::bucket_test {
namespace {

class SqliteBucketIndexTest : public BucketIndexFixture {
 protected:
  void SetUp() override { Open(SqliteIndexBackend()); }
  std::string db_path() const { return SqliteIndexPath(scratch_.path()); }
};

TEST_F(SqliteBucketIndexTest, MoveBucketRenamesTheScopeOfItsShards) {
  Create("ns", "old");
  Upload("ns/old", {1, 2, 3});
  // Rows of the new scope name that already exist (a shard uploaded for it before the move).
  Upload("ns/new", {2});
  ASSERT_TRUE(index_->MoveBucket("ns", "old", "ns", "new", 3000).ok());
  // The shards the bucket's uploads registered follow too.
  {
    auto db = SqliteDb::Open(db_path(), true, 5000);
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(*(*db)->QueryText("SELECT count(*) FROM shards WHERE scope = 'ns/old'"), "0");
    EXPECT_EQ(*(*db)->QueryText("SELECT count(*) FROM shards WHERE scope = 'ns/new'"), "2");
  }
}

TEST_F(SqliteBucketIndexTest, AVersion1DatabaseGainsBuckets) {
  Upload("ns/b", {1});
  index_.reset();
  {  // Turn the database back into what a version-1 binary left behind.
    auto db = SqliteDb::Open(db_path(), false, 5000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("ALTER TABLE xorbs DROP COLUMN seen_at_ms; ALTER TABLE files DROP "
                           "COLUMN seen_at_ms; "
                           "ALTER TABLE shards DROP COLUMN seen_at_ms; DROP TABLE gc_pending; "
                           "DROP TABLE bucket_entries; DROP TABLE buckets; "
                           "DROP INDEX file_scopes_by_scope; DROP INDEX xorb_scopes_by_scope; "
                           "DROP INDEX shards_by_scope; UPDATE schema_version SET version = 1")
                    .ok());
  }
  Reopen();
  Create("ns", "b");
  ApplyOk("ns/b", {Add("x", 1)});
  EXPECT_EQ(Entries("ns", "b").size(), 1u);
}

TEST_F(SqliteBucketIndexTest, AVersion3DatabaseGainsStampsOfTheUpgrade) {
  Create("ns", "b");
  Upload("ns/b", {1, 2});
  index_.reset();
  {  // Turn the database back into what a version-3 binary left behind.
    auto db = SqliteDb::Open(db_path(), false, 5000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(
        (*db)
            ->Exec(std::string("ALTER TABLE xorbs DROP COLUMN seen_at_ms; ALTER TABLE files DROP "
                               "COLUMN seen_at_ms; ALTER TABLE shards DROP COLUMN seen_at_ms; "
                               "DROP TABLE gc_pending; UPDATE schema_version SET version = 3"))
            .ok());
  }
  Reopen();
  // The rows count as seen at the upgrade: a gc with an hour's grace keeps them all.
  auto now = index_->IndexClockMs();
  ASSERT_TRUE(now.ok());
  std::vector<Hash> files;
  ASSERT_TRUE(index_
                  ->ForEachFileRow(false,
                                   [&](const Index::GcFileRow& f) {
                                     EXPECT_GT(f.seen_at_ms, *now - 60'000);
                                     files.push_back(f.hash);
                                     return Status::Ok();
                                   })
                  .ok());
  EXPECT_EQ(files.size(), 2u);
  EXPECT_TRUE(index_->CollectFiles(files, *now - 3'600'000, false)->empty());
  EXPECT_TRUE(index_->PendingDeletions(10, INT64_MAX)->empty());
}

TEST_F(SqliteBucketIndexTest, AVersion2DatabaseGainsPosixMetadata) {
  Create("ns", "b");
  Upload("ns/b", {1, 2});
  ApplyOk("ns/b", {Add("d/x", 1), Add("y", 2, 77)});
  index_.reset();
  {  // Turn the database back into what a version-2 binary left behind.
    auto db = SqliteDb::Open(db_path(), false, 5000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("ALTER TABLE xorbs DROP COLUMN seen_at_ms; ALTER TABLE files DROP "
                           "COLUMN seen_at_ms; "
                           "ALTER TABLE shards DROP COLUMN seen_at_ms; DROP TABLE gc_pending; "
                           "ALTER TABLE buckets DROP COLUMN generation; "
                           "ALTER TABLE bucket_entries DROP COLUMN kind; "
                           "ALTER TABLE bucket_entries DROP COLUMN posix; "
                           "UPDATE schema_version SET version = 2")
                    .ok());
  }
  Reopen();
  auto b = index_->GetBucket("ns", "b");
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ((*b)->generation, 0u);
  EXPECT_EQ((*b)->total_files, 2u);
  auto y = index_->GetBucketEntry("ns", "b", "y");
  ASSERT_TRUE(y.ok() && y->has_value());
  EXPECT_EQ((*y)->mtime_ms, 77);
  EXPECT_FALSE((*y)->posix.has_value());
  EXPECT_FALSE((*y)->is_directory);
  BucketOp dir;
  dir.kind = Kind::kAddDirectory;
  dir.path = "d";
  ApplyOk("ns/b", {dir});
  EXPECT_EQ((**index_->GetBucket("ns", "b")).generation, 1u);
  EXPECT_TRUE((**index_->GetBucketEntry("ns", "b", "d")).is_directory);
}

}  // namespace
}  // namespace xet::testing::bucket_test
