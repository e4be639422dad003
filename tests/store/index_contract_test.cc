// The Index contract, part one (index.h): record round trips, visibility and dedup scoping,
// CommitShard idempotency, tokens, failure isolation of concurrent writes, durability across
// reopen and concurrent reads and writes. Every Index backend runs it (see index_contract.h);
// the bucket part is bucket_index_contract_test.cc.
#include "store/index_contract.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "store/index.h"
#include "store/index_mixed_workload.h"
#include "store/index_support.h"
#include "store/index_test_records.h"

namespace xet::testing::index_test {
namespace {

using Code = Status::Code;

TEST_P(IndexContract, XorbRoundTripAndVisibility) {
  XorbRecord x = MakeXorb(7);
  EXPECT_FALSE(*index_->HasXorb(x.hash));
  EXPECT_FALSE(index_->GetXorb(x.hash)->has_value());
  auto put = index_->PutXorb(x, "ns/a");
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_TRUE(*put);
  EXPECT_TRUE(*index_->HasXorb(x.hash));
  auto got = index_->GetXorb(x.hash);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, x);

  EXPECT_TRUE(*index_->XorbVisible(x.hash, S({"ns/a"})));
  EXPECT_TRUE(*index_->XorbVisible(x.hash, S({"ns/b", "ns/a"})));
  EXPECT_FALSE(*index_->XorbVisible(x.hash, S({"ns/b"})));
  EXPECT_TRUE(*index_->XorbVisible(x.hash, {}));  // admin: exists
  EXPECT_FALSE(*index_->XorbVisible(H(1, 999), {}));

  // Second put: not new, but visibility for another scope is added.
  auto again = index_->PutXorb(x, "ns/b");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_TRUE(*index_->XorbVisible(x.hash, S({"ns/b"})));
  // An xorb without chunks round-trips too.
  XorbRecord empty;
  empty.hash = H(1, 8);
  ASSERT_TRUE(index_->PutXorb(empty, "ns/a").ok());
  EXPECT_EQ(**index_->GetXorb(empty.hash), empty);
}

TEST_P(IndexContract, XorbsVisibleAnswersEachHashInOneLookup) {
  XorbRecord a = MakeXorb(7), b = MakeXorb(8);
  ASSERT_TRUE(index_->PutXorb(a, "ns/a").ok());
  ASSERT_TRUE(index_->PutXorb(b, "ns/b").ok());
  const Hash unknown = H(1, 999);
  const std::vector<Hash> hashes = {a.hash, unknown, b.hash, a.hash};

  auto vis = index_->XorbsVisible(hashes, S({"ns/a"}));
  ASSERT_TRUE(vis.ok()) << vis.status().ToString();
  EXPECT_EQ(*vis, (std::vector<bool>{true, false, false, true}));
  vis = index_->XorbsVisible(hashes, S({"ns/b", "ns/a"}));
  ASSERT_TRUE(vis.ok());
  EXPECT_EQ(*vis, (std::vector<bool>{true, false, true, true}));
  vis = index_->XorbsVisible(hashes, {});  // admin: exists
  ASSERT_TRUE(vis.ok());
  EXPECT_EQ(*vis, (std::vector<bool>{true, false, true, true}));
  vis = index_->XorbsVisible({}, S({"ns/a"}));
  ASSERT_TRUE(vis.ok());
  EXPECT_TRUE(vis->empty());
  // The read transaction ended: a later write is seen by the next lookup.
  ASSERT_TRUE(index_->PutXorb(b, "ns/a").ok());
  vis = index_->XorbsVisible(hashes, S({"ns/a"}));
  ASSERT_TRUE(vis.ok());
  EXPECT_EQ(*vis, (std::vector<bool>{true, false, true, true}));
}

TEST_P(IndexContract, FileRoundTripAndVisibility) {
  XorbRecord x1 = MakeXorb(1), x2 = MakeXorb(2);
  ASSERT_TRUE(index_->PutXorb(x1, "ns/a").ok());
  ASSERT_TRUE(index_->PutXorb(x2, "ns/b").ok());
  FileRecord fa = MakeFile(1, {x1.hash}, 4);
  FileRecord fb = MakeFile(2, {x2.hash}, 2, /*with_sha=*/false);
  FileRecord fempty = MakeFile(3, {x1.hash}, 0, false);

  auto r = index_->CommitShard({H(6, 1), "ns/a", {fa, fempty}, {x1.hash}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, ShardCommitResult::kRegistered);
  ASSERT_TRUE(index_->CommitShard({H(6, 2), "ns/b", {fb}, {x2.hash}}).ok());

  EXPECT_EQ(**index_->GetFile(fa.file_hash), fa);
  EXPECT_EQ(**index_->GetFile(fb.file_hash), fb);
  EXPECT_EQ(**index_->GetFile(fempty.file_hash), fempty);
  EXPECT_FALSE(index_->GetFile(H(3, 99))->has_value());

  EXPECT_TRUE(*index_->FileVisible(fa.file_hash, S({"ns/a"})));
  EXPECT_FALSE(*index_->FileVisible(fa.file_hash, S({"ns/b"})));
  EXPECT_FALSE(*index_->FileVisible(fb.file_hash, S({"ns/a"})));
  EXPECT_TRUE(*index_->FileVisible(fb.file_hash, S({"ns/a", "ns/b"})));
  EXPECT_TRUE(*index_->FileVisible(fa.file_hash, {}));
  EXPECT_TRUE(*index_->FileVisible(fb.file_hash, {}));
  EXPECT_FALSE(*index_->FileVisible(H(3, 99), {}));
  EXPECT_FALSE(*index_->FileVisible(H(3, 99), S({"ns/a"})));
  // A scope that looks like SQL or JSON is just a string.
  EXPECT_FALSE(*index_->FileVisible(fa.file_hash, S({"\"ns/a\"", "' OR 1=1 --", "]"})));
}

TEST_P(IndexContract, CommitShardIsIdempotentAndAddsVisibility) {
  XorbRecord x = MakeXorb(1);
  ASSERT_TRUE(index_->PutXorb(x, "ns/a").ok());
  FileRecord f = MakeFile(1, {x.hash});
  ShardCommit c{H(6, 1), "ns/a", {f}, {x.hash}};
  EXPECT_EQ(*index_->CommitShard(c), ShardCommitResult::kRegistered);
  EXPECT_EQ(*index_->CommitShard(c), ShardCommitResult::kAlreadyExisted);
  // The same shard uploaded by another scope: already existed, but now visible to it too.
  c.scope = "ns/b";
  EXPECT_EQ(*index_->CommitShard(c), ShardCommitResult::kAlreadyExisted);
  EXPECT_TRUE(*index_->FileVisible(f.file_hash, S({"ns/b"})));
  EXPECT_TRUE(*index_->XorbVisible(x.hash, S({"ns/b"})));
  // A different shard carrying a known file with other terms keeps the stored record.
  FileRecord changed = f;
  changed.terms.pop_back();
  EXPECT_EQ(*index_->CommitShard({H(6, 2), "ns/c", {changed}, {}}), ShardCommitResult::kRegistered);
  EXPECT_EQ(**index_->GetFile(f.file_hash), f);
  EXPECT_TRUE(*index_->FileVisible(f.file_hash, S({"ns/c"})));
}

TEST_P(IndexContract, CommitShardWithUnknownXorbFailsWhole) {
  FileRecord f = MakeFile(1, {H(1, 1)});
  auto r = index_->CommitShard({H(6, 1), "ns/a", {f}, {H(1, 1)}});
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
  // Nothing of it is visible: no file, and the shard can be committed later.
  EXPECT_FALSE(index_->GetFile(f.file_hash)->has_value());
  ASSERT_TRUE(index_->PutXorb(MakeXorb(1), "ns/a").ok());
  EXPECT_EQ(*index_->CommitShard({H(6, 1), "ns/a", {f}, {H(1, 1)}}),
            ShardCommitResult::kRegistered);
}

TEST_P(IndexContract, CommitShardChecksTheUploadersVisibility) {
  XorbRecord x1 = MakeXorb(1), x2 = MakeXorb(2);
  ASSERT_TRUE(index_->PutXorb(x1, "ns/a").ok());
  ASSERT_TRUE(index_->PutXorb(x2, "ns/a").ok());
  FileRecord f = MakeFile(1, {x1.hash, x2.hash});
  ShardCommit c{H(6, 1), "ns/b", {f}, {}};
  c.visible_scopes = {"ns/b", "ns/c"};
  auto r = index_->CommitShard(c);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
  // Named: the first of the shard's xorbs in hash order.
  const Hash first =
      std::memcmp(x1.hash.data(), x2.hash.data(), Hash::kSize) < 0 ? x1.hash : x2.hash;
  EXPECT_NE(r.status().message().find("references xorb " + first.ToHex() +
                                      " which was not uploaded; upload xorbs before the shard"),
            std::string::npos)
      << r.status().ToString();
  EXPECT_FALSE(index_->GetFile(f.file_hash)->has_value());
  EXPECT_FALSE(*index_->FileVisible(f.file_hash, S({"ns/b"})));

  // One xorb visible is not enough.
  ASSERT_TRUE(index_->PutXorb(x1, "ns/c").ok());
  r = index_->CommitShard(c);
  EXPECT_NE(r.status().message().find("references xorb " + x2.hash.ToHex()), std::string::npos)
      << r.status().ToString();
  EXPECT_FALSE(index_->GetFile(f.file_hash)->has_value());

  // Any one of the scopes may see each xorb.
  c.visible_scopes = {"ns/c", "ns/a"};
  EXPECT_EQ(*index_->CommitShard(c), ShardCommitResult::kRegistered);
  EXPECT_TRUE(*index_->FileVisible(f.file_hash, S({"ns/b"})));
  // No scopes: no check (admins, fsck).
  ShardCommit d{H(6, 2), "ns/d", {MakeFile(2, {x2.hash})}, {}};
  EXPECT_EQ(*index_->CommitShard(d), ShardCommitResult::kRegistered);
}

TEST_P(IndexContract, FindXorbsWithChunkScopingOrderAndLimit) {
  // Five xorbs that all hold the same eligible chunk C (as chunk 3) and one as chunk 0.
  const Hash c = H(9, 1, /*eligible=*/true);
  const Hash first = H(9, 2);  // not eligible by hash, but a chunk 0
  std::vector<Hash> hashes;
  for (uint64_t n = 0; n < 5; ++n) {
    XorbRecord x = MakeXorb(100 + n);
    x.chunks[3].hash = c;
    if (n == 4) x.chunks[0].hash = first;
    hashes.push_back(x.hash);
    ASSERT_TRUE(index_->PutXorb(x, n % 2 == 0 ? "ns/even" : "ns/odd").ok());
  }
  // Most recent first, all scopes.
  auto all = index_->FindXorbsWithChunk(c, {}, 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (std::vector<Hash>{hashes[4], hashes[3], hashes[2], hashes[1], hashes[0]}));
  EXPECT_EQ(*index_->FindXorbsWithChunk(c, {}, 2), (std::vector<Hash>{hashes[4], hashes[3]}));
  EXPECT_TRUE(index_->FindXorbsWithChunk(c, {}, 0)->empty());
  EXPECT_EQ(*index_->FindXorbsWithChunk(c, S({"ns/odd"}), 10),
            (std::vector<Hash>{hashes[3], hashes[1]}));
  EXPECT_EQ(*index_->FindXorbsWithChunk(c, S({"ns/even"}), 2),
            (std::vector<Hash>{hashes[4], hashes[2]}));
  EXPECT_TRUE(index_->FindXorbsWithChunk(c, S({"ns/none"}), 10)->empty());
  // Chunk 0 is indexed whatever its hash; other ineligible chunks are not.
  EXPECT_EQ(*index_->FindXorbsWithChunk(first, {}, 10), (std::vector<Hash>{hashes[4]}));
  XorbRecord x0 = MakeXorb(100);
  EXPECT_TRUE(index_->FindXorbsWithChunk(x0.chunks[1].hash, {}, 10)->empty());
  // Making an xorb visible to another scope (re-put) extends the dedup answer.
  XorbRecord again = MakeXorb(100);
  again.chunks[3].hash = c;
  ASSERT_TRUE(index_->PutXorb(again, "ns/odd").ok());
  EXPECT_EQ(*index_->FindXorbsWithChunk(c, S({"ns/odd"}), 10),
            (std::vector<Hash>{hashes[3], hashes[1], hashes[0]}));
}

TEST_P(IndexContract, Tokens) {
  TokenRecord a = MakeToken(1, S({"ns/a", "ns/b"}));
  TokenRecord admin = MakeToken(2, {});
  admin.permission = Permission::kAdmin;
  admin.expires_at = 1800000000;
  ASSERT_TRUE(index_->PutToken(a).ok());
  ASSERT_TRUE(index_->PutToken(admin).ok());
  EXPECT_EQ(**index_->FindTokenBySecretHash(a.secret_hash), a);
  EXPECT_EQ(**index_->FindTokenBySecretHash(admin.secret_hash), admin);
  EXPECT_FALSE(index_->FindTokenBySecretHash(H(5, 99))->has_value());
  EXPECT_EQ(*index_->ListTokens(), (std::vector<TokenRecord>{a, admin}));

  ASSERT_TRUE(index_->RevokeToken(a.id).ok());
  a.revoked = true;
  EXPECT_EQ(**index_->FindTokenBySecretHash(a.secret_hash), a);
  EXPECT_EQ(index_->RevokeToken("nope").code(), Code::kNotFound);

  // Put of an existing id updates it; a secret hash used by another token is rejected.
  a.name = "renamed";
  ASSERT_TRUE(index_->PutToken(a).ok());
  EXPECT_EQ((*index_->FindTokenBySecretHash(a.secret_hash))->name, "renamed");
  TokenRecord dup = MakeToken(3);
  dup.secret_hash = admin.secret_hash;
  EXPECT_EQ(index_->PutToken(dup).code(), Code::kInvalidArgument);
  EXPECT_EQ(index_->ListTokens()->size(), 2u);
  TokenRecord bad = MakeToken(4, S({"a\nb"}));
  EXPECT_EQ(index_->PutToken(bad).code(), Code::kInvalidArgument);
  bad = MakeToken(4);
  bad.id.clear();
  EXPECT_EQ(index_->PutToken(bad).code(), Code::kInvalidArgument);
}

TEST_P(IndexContract, GroupCommitIsolatesAFailingOperation) {
  ASSERT_TRUE(index_->PutToken(MakeToken(0)).ok());
  for (int round = 0; round < 5; ++round) {
    constexpr int kThreads = 16;
    std::vector<Status> results(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        TokenRecord tok = MakeToken(static_cast<uint64_t>(1000 * round + t + 1));
        if (t == 7) tok.secret_hash = H(5, 0);  // duplicate of token 0's secret
        ready++;
        while (ready.load() < kThreads) std::this_thread::yield();
        results[static_cast<size_t>(t)] = index_->PutToken(tok);
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      const auto& tok = MakeToken(static_cast<uint64_t>(1000 * round + t + 1));
      if (t == 7) {
        EXPECT_EQ(results[7].code(), Code::kInvalidArgument) << results[7].ToString();
        EXPECT_FALSE(index_->FindTokenBySecretHash(tok.secret_hash)->has_value());
      } else {
        EXPECT_TRUE(results[static_cast<size_t>(t)].ok())
            << results[static_cast<size_t>(t)].ToString();
        EXPECT_TRUE(index_->FindTokenBySecretHash(tok.secret_hash)->has_value());
      }
    }
  }
  EXPECT_EQ(index_->ListTokens()->size(), 1u + 5 * 15);
}

TEST_P(IndexContract, PersistsAcrossReopen) {
  XorbRecord x = MakeXorb(1);
  FileRecord f = MakeFile(1, {x.hash});
  TokenRecord t = MakeToken(1);
  ASSERT_TRUE(index_->PutXorb(x, "ns/a").ok());
  ASSERT_TRUE(index_->CommitShard({H(6, 1), "ns/a", {f}, {x.hash}}).ok());
  ASSERT_TRUE(index_->PutToken(t).ok());
  for (int i = 0; i < 2; ++i) {
    Reopen();
    ASSERT_NE(index_, nullptr);
    EXPECT_EQ(**index_->GetXorb(x.hash), x);
    EXPECT_EQ(**index_->GetFile(f.file_hash), f);
    EXPECT_TRUE(*index_->FileVisible(f.file_hash, S({"ns/a"})));
    EXPECT_EQ(**index_->FindTokenBySecretHash(t.secret_hash), t);
    EXPECT_EQ(*index_->CommitShard({H(6, 1), "ns/a", {f}, {x.hash}}),
              ShardCommitResult::kAlreadyExisted);
  }
}

TEST_P(IndexContract, LargeFileRoundTrips) {
  XorbRecord x = MakeXorb(1);
  ASSERT_TRUE(index_->PutXorb(x, "ns/a").ok());
  FileRecord f = MakeFile(1, {x.hash}, 100000);
  ASSERT_TRUE(index_->CommitShard({H(6, 1), "ns/a", {f}, {x.hash}}).ok());
  EXPECT_EQ(**index_->GetFile(f.file_hash), f);
}

TEST_P(IndexContract, ConcurrentMixedReadsAndWrites) {
  EXPECT_EQ(RunMixedReadsAndWrites(*index_), 0);
  EXPECT_EQ(index_->ListTokens()->size(), static_cast<size_t>(kMixedTokens));
}

}  // namespace
}  // namespace xet::testing::index_test
