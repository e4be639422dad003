#include "client/cache/local_shard_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "format/merkle.h"
#include "format/shard_writer.h"
#include "support/temp_dir.h"

namespace xet {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

Hash H(uint32_t v) {
  Hash h;
  std::memcpy(h.mutable_data(), &v, 4);
  h.mutable_data()[9] = 3;
  return h;
}

std::vector<uint8_t> ShardOf(uint32_t xorb, std::vector<uint32_t> chunks, const Hash& key = {},
                             uint64_t expiry = 0) {
  CasInfo c;
  c.cas_hash = H(xorb);
  uint32_t off = 0;
  for (uint32_t ch : chunks) {
    c.entries.push_back({H(ch), off, 1000, 0, 0});
    off += 1000;
  }
  c.num_bytes_in_cas = off;
  Shard s = key.IsZero() ? Shard{{}, {c}, std::nullopt}
                         : BuildGlobalDedupShard(std::span<const CasInfo>(&c, 1), key, 1, expiry);
  auto bytes = key.IsZero() ? SerializeShardForUpload(s) : SerializeShard(s);
  EXPECT_TRUE(bytes.ok());
  return *bytes;
}

void SetAge(const std::string& path, int seconds_ago) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::seconds(seconds_ago));
}

TEST(LocalShardCacheTest, StoredShardsAreIndexedOnLoad) {
  TempDir dir("xet-shard-cache");
  const std::string cache_dir = dir.path() + "/cache";
  LocalShardCache cache(cache_dir);
  ASSERT_TRUE(cache.Add("a", ShardOf(100, {1, 2, 3})).ok());
  ASSERT_TRUE(cache.Add("b", ShardOf(200, {4}, H(55), 5000)).ok());

  DedupIndex index;
  auto load = LocalShardCache(cache_dir).Load(index, 1000);
  ASSERT_TRUE(load.ok());
  EXPECT_EQ(load->shards_loaded, 2u);
  EXPECT_EQ(load->chunks_indexed, 4u);
  auto loc = index.Find(H(2), 1000);
  ASSERT_TRUE(loc);
  EXPECT_EQ(index.XorbHash(loc->xorb), H(100));
  auto keyed = index.Find(H(4), 1000);  // found through the key
  ASSERT_TRUE(keyed);
  EXPECT_EQ(index.XorbHash(keyed->xorb), H(200));
}

TEST(LocalShardCacheTest, CorruptAndExpiredFilesAreRemovedNotFatal) {
  TempDir dir("xet-shard-cache");
  LocalShardCache cache(dir.path());
  ASSERT_TRUE(cache.Add("good", ShardOf(100, {1})).ok());
  ASSERT_TRUE(cache.Add("expired", ShardOf(200, {2}, H(55), 500)).ok());
  auto truncated = ShardOf(300, {3});
  truncated.resize(truncated.size() - 7);
  ASSERT_TRUE(cache.Add("truncated", truncated).ok());
  { std::ofstream(dir.path() + "/junk.shard") << "not a shard"; }

  DedupIndex index;
  auto load = cache.Load(index, 1000);
  ASSERT_TRUE(load.ok());
  EXPECT_EQ(load->shards_loaded, 1u);
  EXPECT_EQ(load->files_removed, 3u);
  EXPECT_TRUE(index.Find(H(1), 1000));
  EXPECT_FALSE(index.Find(H(3), 1000));
  EXPECT_TRUE(fs::exists(dir.path() + "/good.shard"));
  EXPECT_FALSE(fs::exists(dir.path() + "/junk.shard"));
}

TEST(LocalShardCacheTest, EvictsTheOldestBeyondTheBound) {
  TempDir dir("xet-shard-cache");
  const auto one = ShardOf(100, {1});
  LocalShardCache writer(dir.path());
  ASSERT_TRUE(writer.Add("old", ShardOf(100, {1})).ok());
  ASSERT_TRUE(writer.Add("mid", ShardOf(200, {2})).ok());
  ASSERT_TRUE(writer.Add("new", ShardOf(300, {3})).ok());
  SetAge(dir.path() + "/old.shard", 300);
  SetAge(dir.path() + "/mid.shard", 200);
  SetAge(dir.path() + "/new.shard", 100);

  DedupIndex index;
  auto load = LocalShardCache(dir.path(), 2 * one.size()).Load(index, 0);
  ASSERT_TRUE(load.ok());
  EXPECT_EQ(load->shards_loaded, 2u);
  EXPECT_EQ(load->files_removed, 1u);
  EXPECT_FALSE(index.Find(H(1), 0));
  EXPECT_TRUE(index.Find(H(2), 0));
  EXPECT_TRUE(index.Find(H(3), 0));
  EXPECT_FALSE(fs::exists(dir.path() + "/old.shard"));
}

}  // namespace
}  // namespace xet
