// The record caches the CAS service keeps (xorb chunk tables, file records), the index
// scans that warm them at start (SqliteIndex::ForEachRecentXorb/File) and the warm-up
// itself (WarmRecordCaches): newest first, bounded by the budget and the capacities,
// corrupted rows reported, cached records identical to what the index returns.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "server/cache/cache_warmer.h"
#include "server/cache/file_record_cache.h"
#include "server/cache/record_lru.h"
#include "server/cache/xorb_record_cache.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/sqlite_index.h"
#include "support/temp_dir.h"

namespace xet {
namespace {

using testing::TempDir;
using Code = Status::Code;

Hash H(uint64_t tag, uint64_t n) {
  Hash h;
  const uint64_t w[4] = {tag * 0x9E3779B97F4A7C15ULL + n, n ^ 0x5A5A, tag + 3 * n + 1, n + 17};
  std::memcpy(h.mutable_data(), w, 32);
  return h;
}

XorbRecord MakeXorb(uint64_t n, size_t chunks) {
  XorbRecord x;
  x.hash = H(1, n);
  uint32_t c = 0, u = 0;
  for (size_t i = 0; i < chunks; ++i) {
    c += 100 + static_cast<uint32_t>(i);
    u += 200 + static_cast<uint32_t>(i);
    x.chunks.push_back({H(2, n * 1000 + i), c, u});
  }
  x.object_size = c + 50;
  return x;
}

// A file of `terms` terms over `x`, each one chunk; its hash is H(3, n).
FileRecord MakeFile(uint64_t n, const XorbRecord& x, size_t terms) {
  FileRecord f;
  f.file_hash = H(3, n);
  for (size_t i = 0; i < terms; ++i) {
    const auto c = static_cast<uint32_t>(i % x.chunks.size());
    const uint32_t start = c == 0 ? 0 : x.chunks[c - 1].uncompressed_end;
    f.terms.push_back({x.hash, c, c + 1, x.chunks[c].uncompressed_end - start});
    f.size += f.terms.back().unpacked_bytes;
  }
  if (n % 2 == 0) f.sha256 = H(4, n);
  return f;
}

// A deadline the tests do not reach.
std::chrono::steady_clock::time_point Later() {
  return std::chrono::steady_clock::now() + std::chrono::hours(1);
}

class RecordCachesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index = SqliteIndex::Open(dir_.path() + "/index.db", SqliteIndex::Options{});
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    index_ = std::move(index).value();
  }

  // Stores xorbs 1..n (16 chunks each) and files 1..n (file i over xorb i), in order.
  void Store(size_t n) {
    for (size_t i = 1; i <= n; ++i) {
      xorbs_.push_back(MakeXorb(i, 16));
      ASSERT_TRUE(index_->PutXorb(xorbs_.back(), "ns/a").ok());
      files_.push_back(MakeFile(i, xorbs_.back(), 10 + i));
      ASSERT_TRUE(
          index_->CommitShard({H(6, i), "ns/a", {files_.back()}, {xorbs_.back().hash}}).ok());
    }
  }

  TempDir dir_;
  std::unique_ptr<SqliteIndex> index_;
  std::vector<XorbRecord> xorbs_;
  std::vector<FileRecord> files_;
};

TEST_F(RecordCachesTest, SqliteScansVisitNewestFirstAndStopWhenAsked) {
  Store(5);
  std::vector<XorbRecord> seen_x;
  ASSERT_TRUE(index_
                  ->ForEachRecentXorb([&](XorbRecord x) {
                    seen_x.push_back(std::move(x));
                    return true;
                  })
                  .ok());
  ASSERT_EQ(seen_x.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(seen_x[i], xorbs_[4 - i]) << i;

  std::vector<FileRecord> seen_f;
  ASSERT_TRUE(index_
                  ->ForEachRecentFile([&](FileRecord f) {
                    seen_f.push_back(std::move(f));
                    return seen_f.size() < 2;  // stop after two
                  })
                  .ok());
  ASSERT_EQ(seen_f.size(), 2u);
  EXPECT_EQ(seen_f[0], files_[4]);
  EXPECT_EQ(seen_f[1], files_[3]);
  // The same records the point lookups return, sha256 (present or absent) included.
  EXPECT_EQ(seen_f[0], **index_->GetFile(files_[4].file_hash));
  EXPECT_EQ(seen_f[1], **index_->GetFile(files_[3].file_hash));
}

TEST_F(RecordCachesTest, SqliteScansOfAnEmptyIndexVisitNothing) {
  int visits = 0;
  EXPECT_TRUE(index_->ForEachRecentXorb([&](XorbRecord) { return ++visits > 0; }).ok());
  EXPECT_TRUE(index_->ForEachRecentFile([&](FileRecord) { return ++visits > 0; }).ok());
  EXPECT_EQ(visits, 0);
}

TEST_F(RecordCachesTest, SqliteScansReportCorruptedRows) {
  Store(2);
  {
    auto db = SqliteDb::Open(dir_.path() + "/index.db", false, 5000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("UPDATE xorbs SET chunks = zeroblob(41) WHERE id = 1; "
                           "UPDATE files SET terms = x'0102' WHERE id = 1;")
                    .ok());
  }
  // Reopened: the readers must not see stale mapped pages.
  index_.reset();
  SetUp();
  size_t xorbs = 0, files = 0;
  auto sx = index_->ForEachRecentXorb([&](XorbRecord) { return ++xorbs > 0; });
  auto sf = index_->ForEachRecentFile([&](FileRecord) { return ++files > 0; });
  EXPECT_EQ(sx.code(), Code::kCorruption);
  EXPECT_EQ(sf.code(), Code::kCorruption);
  EXPECT_EQ(xorbs, 1u);  // the newest row was fine and visited before the broken one
  EXPECT_EQ(files, 1u);
}

TEST_F(RecordCachesTest, WarmUpFillsBothCachesNewestFirstWithinTheBudget) {
  Store(6);
  const size_t xorb_bytes = XorbRecordCache::RecordBytes(xorbs_[0]);  // all the same size
  // Room for exactly three tables; file records differ in size: compute what fits.
  const size_t budget = 3 * xorb_bytes;
  size_t want_files = 0, file_total = 0;
  for (size_t i = files_.size(); i-- > 0;) {
    const size_t b = FileRecordCache::RecordBytes(files_[i]);
    if (file_total + b > budget) break;
    file_total += b;
    ++want_files;
  }
  ASSERT_GT(want_files, 0u);
  ASSERT_LT(want_files, files_.size());

  XorbRecordCache xorbs(*index_, 1 << 20);
  FileRecordCache files(*index_, 1 << 20);
  auto stats = WarmRecordCaches(*index_, xorbs, files, budget, Later());
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->xorbs, 3u);
  EXPECT_EQ(stats->files, want_files);
  EXPECT_EQ(stats->bytes, 3 * xorb_bytes + file_total);
  EXPECT_EQ(xorbs.size(), 3u);
  EXPECT_EQ(xorbs.bytes(), 3 * xorb_bytes);
  EXPECT_EQ(files.size(), want_files);
  EXPECT_EQ(files.bytes(), file_total);

  // The newest are the ones cached: reading them does not grow the cache, reading an
  // older one does (a miss that goes to the index).
  for (size_t i = 3; i < 6; ++i) {
    auto rec = xorbs.Get(xorbs_[i].hash);
    ASSERT_TRUE(rec.ok() && *rec);
    EXPECT_EQ(**rec, xorbs_[i]);
  }
  EXPECT_EQ(xorbs.size(), 3u);
  for (size_t i = files_.size() - want_files; i < files_.size(); ++i) {
    auto rec = files.Get(files_[i].file_hash);
    ASSERT_TRUE(rec.ok() && *rec);
    EXPECT_EQ(**rec, files_[i]);
  }
  EXPECT_EQ(files.size(), want_files);
  auto old = xorbs.Get(xorbs_[0].hash);
  ASSERT_TRUE(old.ok() && *old);
  EXPECT_EQ(**old, xorbs_[0]);
  EXPECT_EQ(xorbs.size(), 4u);
}

TEST_F(RecordCachesTest, WarmUpRespectsCapacityZeroBudgetAndWhatIsCachedAlready) {
  Store(4);
  const size_t xorb_bytes = XorbRecordCache::RecordBytes(xorbs_[0]);
  {
    XorbRecordCache xorbs(*index_, 2 * xorb_bytes);  // capacity below the budget
    FileRecordCache files(*index_, 0);               // keeps nothing
    auto stats = WarmRecordCaches(*index_, xorbs, files, 1 << 20, Later());
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->xorbs, 2u);
    EXPECT_EQ(stats->files, 0u);
    EXPECT_EQ(xorbs.size(), 2u);
    // A cache that keeps nothing still answers from the index.
    auto f = files.Get(files_[0].file_hash);
    ASSERT_TRUE(f.ok() && *f);
    EXPECT_EQ(**f, files_[0]);
    EXPECT_EQ(files.size(), 0u);
    // Warming again adds nothing: the room is used up.
    auto again = WarmRecordCaches(*index_, xorbs, files, 1 << 20, Later());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->xorbs, 0u);
    EXPECT_EQ(xorbs.size(), 2u);
  }
  {
    XorbRecordCache xorbs(*index_, 1 << 20);
    FileRecordCache files(*index_, 1 << 20);
    auto stats = WarmRecordCaches(*index_, xorbs, files, 0, Later());
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->xorbs + stats->files, 0u);
    EXPECT_EQ(xorbs.size() + files.size(), 0u);
  }
}

TEST_F(RecordCachesTest, WarmUpStopsAtItsDeadline) {
  Store(3);
  XorbRecordCache xorbs(*index_, 1 << 20);
  FileRecordCache files(*index_, 1 << 20);
  auto stats = WarmRecordCaches(*index_, xorbs, files, 1 << 20,
                                std::chrono::steady_clock::now() - std::chrono::seconds(1));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->xorbs + stats->files, 0u);
  EXPECT_EQ(xorbs.size() + files.size(), 0u);
}

TEST_F(RecordCachesTest, WarmUpReportsAScanError) {
  Store(2);
  {
    auto db = SqliteDb::Open(dir_.path() + "/index.db", false, 5000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("UPDATE xorbs SET chunks = x'00' WHERE id = 1").ok());
  }
  index_.reset();
  SetUp();
  XorbRecordCache xorbs(*index_, 1 << 20);
  FileRecordCache files(*index_, 1 << 20);
  auto stats = WarmRecordCaches(*index_, xorbs, files, 1 << 20, Later());
  EXPECT_EQ(stats.status().code(), Code::kCorruption);
  EXPECT_EQ(xorbs.size(), 1u);  // the newest, read before the broken row, stays
}

TEST(FileRecordCache, UnknownFilesAreNullAndNotCached) {
  TempDir dir;
  auto index = SqliteIndex::Open(dir.path() + "/index.db", SqliteIndex::Options{});
  ASSERT_TRUE(index.ok());
  FileRecordCache files(**index, 1 << 20);
  auto rec = files.Get(H(3, 42));
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(*rec, nullptr);
  EXPECT_EQ(files.size(), 0u);
}

TEST(RecordLru, EvictsLeastRecentlyUsedAndKeepsTheFirstInsert) {
  RecordLru<int> lru(30);
  lru.Insert(H(9, 1), std::make_shared<const int>(1), 10);
  lru.Insert(H(9, 2), std::make_shared<const int>(2), 10);
  lru.Insert(H(9, 3), std::make_shared<const int>(3), 10);
  ASSERT_NE(lru.Find(H(9, 1)), nullptr);  // 1 is now the most recently used
  lru.Insert(H(9, 4), std::make_shared<const int>(4), 10);
  EXPECT_EQ(lru.Find(H(9, 2)), nullptr);  // the least recently used went
  EXPECT_EQ(*lru.Find(H(9, 1)), 1);
  EXPECT_EQ(*lru.Find(H(9, 3)), 3);
  EXPECT_EQ(*lru.Find(H(9, 4)), 4);
  EXPECT_EQ(lru.bytes(), 30u);
  // A second insert under a present key changes nothing (records never change).
  lru.Insert(H(9, 4), std::make_shared<const int>(40), 10);
  EXPECT_EQ(*lru.Find(H(9, 4)), 4);
  EXPECT_EQ(lru.size(), 3u);
  // Larger than the whole capacity: not kept, nothing evicted.
  lru.Insert(H(9, 5), std::make_shared<const int>(5), 31);
  EXPECT_EQ(lru.Find(H(9, 5)), nullptr);
  EXPECT_EQ(lru.size(), 3u);
  EXPECT_EQ(lru.bytes(), 30u);
}

}  // namespace
}  // namespace xet
