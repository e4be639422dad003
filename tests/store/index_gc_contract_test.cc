// The Index contract, operator tools (index.h, "operator tools: gc/fsck"): liveness stamps,
// the paged row listings, CollectFiles, RetireXorbs/RetireShards and pending deletions.
// Every Index backend runs it (the IndexContract suite; see index_contract.h).
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/index.h"
#include "store/index_contract.h"
#include "store/index_test_records.h"
#include "store/object_store.h"

namespace xet::testing::index_test {
namespace {

using Code = Status::Code;

// A cutoff later than every stamp written so far (the index clock moves on by a few ms).
int64_t CutoffAfterNow(Index& index) {
  auto now = index.IndexClockMs();
  EXPECT_TRUE(now.ok()) << now.status().ToString();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return *now + 10;
}

void SleepPastCutoff() { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }

Status AddEntry(Index& index, const std::string& bucket, const std::string& path,
                const Hash& file) {
  BucketOp op;
  op.kind = BucketOp::Kind::kAddFile;
  op.path = path;
  op.file_hash = file;
  auto r = index.ApplyBucketBatch("ns", bucket, {op}, 1);
  if (!r.ok()) return r.status();
  if (!r->ops[0].ok) return Status::InvalidArgument(r->ops[0].error);
  return Status::Ok();
}

TEST_P(IndexContract, RetireXorbsHonoursStampsAndBlocksReuploadUntilForgotten) {
  XorbRecord x = MakeXorb(1), y = MakeXorb(2);
  ASSERT_TRUE(index_->PutXorb(x, "ns/a").ok());
  const int64_t cutoff = CutoffAfterNow(*index_);
  SleepPastCutoff();
  ASSERT_TRUE(index_->PutXorb(y, "ns/a").ok());  // stamped after the cutoff

  // Nothing is older than a cutoff in the past.
  auto none = index_->RetireXorbs(std::vector<Hash>{x.hash, y.hash}, cutoff - 60'000, false);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
  // Dry run: reported, nothing changes.
  auto dry = index_->RetireXorbs(std::vector<Hash>{x.hash, y.hash, H(1, 99)}, cutoff, true);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  EXPECT_EQ(*dry, std::vector<Hash>{x.hash});
  EXPECT_TRUE(*index_->HasXorb(x.hash));
  EXPECT_TRUE(index_->PendingDeletions(10, INT64_MAX)->empty());

  auto retired = index_->RetireXorbs(std::vector<Hash>{x.hash, y.hash}, cutoff, false);
  ASSERT_TRUE(retired.ok()) << retired.status().ToString();
  EXPECT_EQ(*retired, std::vector<Hash>{x.hash});
  EXPECT_FALSE(*index_->HasXorb(x.hash));
  EXPECT_FALSE(*index_->XorbVisible(x.hash, S({"ns/a"})));
  EXPECT_TRUE(index_->FindXorbsWithChunk(x.chunks[0].hash, {}, 10)->empty());
  EXPECT_TRUE(*index_->HasXorb(y.hash));
  EXPECT_EQ(*index_->PendingDeletions(10, INT64_MAX), std::vector<std::string>{XorbKey(x.hash)});
  // Only keys retired before the given time are listed.
  EXPECT_TRUE(index_->PendingDeletions(10, cutoff)->empty());
  EXPECT_TRUE(index_->PendingDeletions(0, INT64_MAX)->empty());

  // While its object deletion is pending, the xorb cannot come back.
  auto again = index_->PutXorb(x, "ns/a");
  EXPECT_EQ(again.status().code(), Code::kUnavailable) << again.status().ToString();
  EXPECT_FALSE(*index_->HasXorb(x.hash));
  const std::vector<std::string> keys = {XorbKey(x.hash)};
  ASSERT_TRUE(index_->ForgetPendingDeletions(keys).ok());
  EXPECT_TRUE(index_->PendingDeletions(10, INT64_MAX)->empty());
  again = index_->PutXorb(x, "ns/a");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(*again);
  EXPECT_EQ(*index_->FindXorbsWithChunk(x.chunks[0].hash, {}, 10), std::vector<Hash>{x.hash});
}

TEST_P(IndexContract, CommitShardChecksAndStampsEveryTermXorb) {
  XorbRecord x1 = MakeXorb(1), x2 = MakeXorb(2);
  ASSERT_TRUE(index_->PutXorb(x1, "ns/a").ok());
  ASSERT_TRUE(index_->PutXorb(x2, "ns/a").ok());
  const int64_t cutoff = CutoffAfterNow(*index_);
  SleepPastCutoff();
  // x2 is named only by a term (a deduplicated xorb), not by the CAS section: registering
  // the file stamps it, so a retirement with the older cutoff keeps it.
  FileRecord f = MakeFile(1, {x1.hash, x2.hash});
  ASSERT_TRUE(index_->CommitShard({H(6, 1), "ns/a", {f}, {x1.hash}}).ok());
  EXPECT_TRUE(index_->RetireXorbs(std::vector<Hash>{x1.hash, x2.hash}, cutoff, false)->empty());

  // A term naming a retired xorb refuses the whole shard.
  XorbRecord x3 = MakeXorb(3);
  ASSERT_TRUE(index_->PutXorb(x3, "ns/a").ok());
  SleepPastCutoff();
  auto cutoff2 = CutoffAfterNow(*index_);
  ASSERT_EQ(*index_->RetireXorbs(std::vector<Hash>{x3.hash}, cutoff2, false),
            std::vector<Hash>{x3.hash});
  FileRecord g = MakeFile(2, {x1.hash, x3.hash});
  auto r = index_->CommitShard({H(6, 2), "ns/a", {g}, {x1.hash}});
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find(x3.hash.ToHex()), std::string::npos) << r.status().ToString();
  EXPECT_FALSE(index_->GetFile(g.file_hash)->has_value());
}

TEST_P(IndexContract, CollectFilesKeepsEntriesAndRecentFiles) {
  XorbRecord x = MakeXorb(1);
  ASSERT_TRUE(index_->PutXorb(x, "ns/b").ok());
  ASSERT_TRUE(index_->CreateBucket("ns", "b", true, 1).ok());
  FileRecord in_bucket = MakeFile(1, {x.hash}), loose = MakeFile(2, {x.hash}),
             young = MakeFile(3, {x.hash});
  ASSERT_TRUE(index_->CommitShard({H(6, 1), "ns/b", {in_bucket, loose}, {x.hash}}).ok());
  ASSERT_TRUE(AddEntry(*index_, "b", "kept.bin", in_bucket.file_hash).ok());
  const int64_t cutoff = CutoffAfterNow(*index_);
  SleepPastCutoff();
  ASSERT_TRUE(index_->CommitShard({H(6, 2), "ns/other", {young}, {}}).ok());
  const std::vector<Hash> all = {in_bucket.file_hash, loose.file_hash, young.file_hash};

  auto dry = index_->CollectFiles(all, cutoff, true);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  EXPECT_EQ(*dry, std::vector<Hash>{loose.file_hash});
  EXPECT_TRUE(*index_->FileVisible(loose.file_hash, S({"ns/b"})));

  auto collected = index_->CollectFiles(all, cutoff, false);
  ASSERT_TRUE(collected.ok()) << collected.status().ToString();
  EXPECT_EQ(*collected, std::vector<Hash>{loose.file_hash});
  EXPECT_FALSE(index_->GetFile(loose.file_hash)->has_value());
  EXPECT_FALSE(*index_->FileVisible(loose.file_hash, S({"ns/b"})));
  EXPECT_TRUE(index_->GetFile(in_bucket.file_hash)->has_value());
  EXPECT_TRUE(index_->GetFile(young.file_hash)->has_value());
  // A collected file can no longer be added to a bucket (until its shard is uploaded again).
  auto add = AddEntry(*index_, "b", "late.bin", loose.file_hash);
  EXPECT_FALSE(add.ok());
  EXPECT_NE(add.message().find("not found"), std::string::npos) << add.ToString();
  ASSERT_TRUE(index_->CommitShard({H(6, 3), "ns/b", {loose}, {}}).ok());
  EXPECT_TRUE(AddEntry(*index_, "b", "late.bin", loose.file_hash).ok());
  // Once its entry is removed, the old file can go.
  BucketOp del;
  del.kind = BucketOp::Kind::kDeleteFile;
  del.path = "kept.bin";
  ASSERT_TRUE(index_->ApplyBucketBatch("ns", "b", {del}, 2).ok());
  EXPECT_EQ(*index_->CollectFiles(all, cutoff, false), std::vector<Hash>{in_bucket.file_hash});
}

TEST_P(IndexContract, RowListingsPageThroughEverything) {
  XorbRecord x = MakeXorb(1);
  ASSERT_TRUE(index_->PutXorb(x, "ns/a").ok());
  std::vector<FileRecord> files;
  for (uint64_t n = 0; n < 1234; ++n) files.push_back(MakeFile(n, {x.hash}, 1));
  ASSERT_TRUE(index_->CommitShard({H(6, 1), "ns/a", files, {x.hash}}).ok());
  ASSERT_TRUE(index_->CommitShard({H(6, 2), "ns/a", {}, {x.hash}}).ok());

  std::set<Hash> seen;
  size_t with_terms = 0;
  ASSERT_TRUE(index_
                  ->ForEachFileRow(true,
                                   [&](const Index::GcFileRow& f) {
                                     seen.insert(f.hash);
                                     if (f.terms.size() == 1 && f.terms[0].xorb_hash == x.hash) {
                                       ++with_terms;
                                     }
                                     return Status::Ok();
                                   })
                  .ok());
  EXPECT_EQ(seen.size(), files.size());
  EXPECT_EQ(with_terms, files.size());
  size_t without = 0;
  ASSERT_TRUE(index_
                  ->ForEachFileRow(false,
                                   [&](const Index::GcFileRow& f) {
                                     without += f.terms.empty() ? 1 : 0;
                                     return Status::Ok();
                                   })
                  .ok());
  EXPECT_EQ(without, files.size());
  std::vector<Hash> xorbs, shards;
  ASSERT_TRUE(index_
                  ->ForEachXorbRow([&](const Index::GcXorbRow& r) {
                    xorbs.push_back(r.hash);
                    EXPECT_EQ(r.object_size, x.object_size);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(xorbs, std::vector<Hash>{x.hash});
  ASSERT_TRUE(index_
                  ->ForEachShardRow([&](const Index::GcShardRow& r) {
                    shards.push_back(r.hash);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(shards.size(), 2u);
  // A visitor's error stops the listing and is returned.
  size_t visits = 0;
  Status st = index_->ForEachFileRow(false, [&](const Index::GcFileRow&) {
    ++visits;
    return Status::Internal("stop");
  });
  EXPECT_EQ(st.code(), Code::kInternal);
  EXPECT_EQ(visits, 1u);
}

TEST_P(IndexContract, RetireShardsBlocksTheirRecommitUntilForgotten) {
  XorbRecord x = MakeXorb(1);
  ASSERT_TRUE(index_->PutXorb(x, "ns/a").ok());
  ShardCommit old{H(6, 1), "ns/a", {}, {x.hash}};
  ASSERT_TRUE(index_->CommitShard(old).ok());
  const int64_t cutoff = CutoffAfterNow(*index_);
  SleepPastCutoff();
  ShardCommit young{H(6, 2), "ns/a", {}, {x.hash}};
  ASSERT_TRUE(index_->CommitShard(young).ok());
  const std::vector<Hash> both = {old.shard_hash, young.shard_hash};
  EXPECT_EQ(*index_->RetireShards(both, cutoff, true), std::vector<Hash>{old.shard_hash});
  EXPECT_TRUE(index_->PendingDeletions(10, INT64_MAX)->empty());
  EXPECT_EQ(*index_->RetireShards(both, cutoff, false), std::vector<Hash>{old.shard_hash});
  EXPECT_EQ(*index_->PendingDeletions(10, INT64_MAX),
            std::vector<std::string>{ShardKey(old.shard_hash)});
  EXPECT_EQ(index_->CommitShard(old).status().code(), Code::kUnavailable);
  const std::vector<std::string> keys = {ShardKey(old.shard_hash)};
  ASSERT_TRUE(index_->ForgetPendingDeletions(keys).ok());
  EXPECT_EQ(*index_->CommitShard(old), ShardCommitResult::kRegistered);
}

}  // namespace
}  // namespace xet::testing::index_test
