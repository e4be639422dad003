#include "client/cache/dedup_index.h"

#include <gtest/gtest.h>

#include "format/merkle.h"

namespace xet {
namespace {

Hash H(uint8_t b) {
  Hash h;
  h.mutable_data()[0] = b;
  h.mutable_data()[31] = 1;
  return h;
}

CasInfo Cas(const Hash& xorb, std::vector<Hash> chunks) {
  CasInfo c;
  c.cas_hash = xorb;
  uint32_t off = 0;
  for (const Hash& h : chunks) {
    c.entries.push_back({h, off, 100, 0, 0});
    off += 100;
  }
  c.num_bytes_in_cas = off;
  return c;
}

TEST(DedupIndexTest, SessionXorbsGetHashesWhenSealed) {
  DedupIndex index;
  const uint32_t a = index.NewSessionXorb();
  const uint32_t b = index.NewSessionXorb();
  EXPECT_NE(a, b);
  index.Insert(H(1), {a, 0}, 100);
  index.Insert(H(1), {b, 5}, 100);  // first wins
  EXPECT_EQ(index.Find(H(1), 0), (ChunkLocation{a, 0}));
  EXPECT_FALSE(index.Find(H(2), 0));
  EXPECT_TRUE(index.XorbHash(a).IsZero());
  index.SetXorbHash(a, H(9));
  EXPECT_EQ(index.XorbHash(a), H(9));
}

TEST(DedupIndexTest, PlainShardChunksAreFound) {
  DedupIndex index;
  Shard s;
  s.cas_infos.push_back(Cas(H(50), {H(1), H(2), H(3)}));
  EXPECT_EQ(index.AddShard(s, 0), 3u);
  auto loc = index.Find(H(3), 0);
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc->index, 2u);
  EXPECT_EQ(index.XorbHash(loc->xorb), H(50));
}

TEST(DedupIndexTest, CachedXorbsAreUnconfirmedAndMissingOnesAreSkipped) {
  DedupIndex index;
  const uint32_t session = index.NewSessionXorb();
  EXPECT_EQ(index.Trust(session), XorbTrust::kConfirmed);

  Shard cached;
  cached.cas_infos.push_back(Cas(H(50), {H(1), H(2)}));
  cached.cas_infos.push_back(Cas(H(60), {H(3)}));
  index.AddShard(cached, 0, XorbTrust::kUnconfirmed);
  auto loc = index.Find(H(1), 0);
  ASSERT_TRUE(loc);
  EXPECT_EQ(index.Trust(loc->xorb), XorbTrust::kUnconfirmed);

  // The server says it does not have xorb 50: its chunks are no longer found.
  index.SetTrust(loc->xorb, XorbTrust::kMissing);
  EXPECT_FALSE(index.Find(H(1), 0));
  EXPECT_FALSE(index.Find(H(2), 0));
  EXPECT_TRUE(index.Find(H(3), 0));

  // A global-dedup answer naming xorb 50 (the server has it after all) confirms it.
  Shard answer;
  answer.cas_infos.push_back(Cas(H(50), {H(1), H(2)}));
  index.AddShard(answer, 0);
  loc = index.Find(H(2), 0);
  ASSERT_TRUE(loc);
  EXPECT_EQ(index.Trust(loc->xorb), XorbTrust::kConfirmed);

  // An unconfirmed shard never downgrades a confirmed xorb.
  index.AddShard(cached, 0, XorbTrust::kUnconfirmed);
  EXPECT_EQ(index.Trust(index.Find(H(1), 0)->xorb), XorbTrust::kConfirmed);
}

TEST(DedupIndexTest, PartialCasBlocksAreSkipped) {
  DedupIndex index;
  Shard s;
  CasInfo c = Cas(H(50), {H(1), H(2)});
  c.num_bytes_in_cas += 100;  // claims a chunk it does not list
  s.cas_infos.push_back(c);
  EXPECT_EQ(index.AddShard(s, 0), 0u);
  EXPECT_FALSE(index.Find(H(1), 0));
}

TEST(DedupIndexTest, KeyedAnswersHonourKeyAndExpiry) {
  const Hash key = H(77);
  Shard s;
  s.cas_infos.push_back(Cas(H(50), {DedupProtectedHash(H(1), key), DedupProtectedHash(H(2), key)}));
  s.footer = ShardFooter();
  s.footer->chunk_hash_hmac_key = key;
  s.footer->shard_key_expiry = 1000;

  DedupIndex index;
  EXPECT_EQ(index.AddShard(s, 500), 2u);
  auto loc = index.Find(H(2), 500);
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc->index, 1u);
  EXPECT_EQ(index.XorbHash(loc->xorb), H(50));
  // The raw hash of the keyed entry is not a plain entry.
  EXPECT_FALSE(index.Find(DedupProtectedHash(H(2), key), 500));
  // Past the expiry the answer is no longer used.
  EXPECT_FALSE(index.Find(H(2), 1000));

  DedupIndex late;
  EXPECT_EQ(late.AddShard(s, 2000), 0u);
}

}  // namespace
}  // namespace xet

namespace xet {
namespace {

TEST(DedupIndexTest, FollowingChunkWalksAKnownXorbSequenceOnly) {
  DedupIndex index;
  // A session xorb, packed in order.
  const uint32_t a = index.NewSessionXorb();
  index.Insert(H(1), {a, 0}, 10000);
  index.Insert(H(2), {a, 1}, 20000);
  ASSERT_TRUE(index.FollowingChunk(H(1)));
  EXPECT_EQ(index.FollowingChunk(H(1))->hash, H(2));
  EXPECT_EQ(index.FollowingChunk(H(1))->size, 20000u);
  EXPECT_FALSE(index.FollowingChunk(H(2)));  // the xorb's last chunk (so far)
  EXPECT_FALSE(index.FollowingChunk(H(7)));  // unknown chunk
  // An unkeyed shard: its whole-xorb sequences.
  Shard s;
  s.cas_infos.push_back(Cas(H(20), {H(3), H(4), H(5)}));
  index.AddShard(s, 0, XorbTrust::kUnconfirmed);
  EXPECT_EQ(index.FollowingChunk(H(3))->hash, H(4));
  EXPECT_EQ(index.FollowingChunk(H(4))->hash, H(5));
  EXPECT_EQ(index.FollowingChunk(H(4))->size, 100u);
  EXPECT_FALSE(index.FollowingChunk(H(5)));
  // Predictions ignore trust: a xorb the server lacks still tells where its chunks ended.
  index.SetTrust(index.Find(H(3), 0)->xorb, XorbTrust::kMissing);
  EXPECT_EQ(index.FollowingChunk(H(3))->hash, H(4));
  // A keyed answer (another client's xorbs) never predicts.
  Shard keyed;
  keyed.footer = ShardFooter();
  keyed.footer->chunk_hash_hmac_key = H(42);
  keyed.cas_infos.push_back(Cas(H(21), {H(8), H(9)}));
  index.AddShard(keyed, 0);
  EXPECT_FALSE(index.FollowingChunk(H(8)));
  EXPECT_FALSE(index.FollowingChunk(DedupProtectedHash(H(8), H(42))));
}

}  // namespace
}  // namespace xet
