// SqliteIndex: record round trips, visibility and dedup scoping, CommitShard idempotency,
// group-commit failure isolation, persistence, migrations, corrupted blobs, concurrency and
// a SIGKILL crash test (together with LocalObjectStore).
#include "store/sqlite/sqlite_index.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "store/local/local_object_store.h"
#include "store/sqlite/index_blobs.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/sqlite_group_commit.h"
#include "store/sqlite/sqlite_schema.h"
#include "support/temp_dir.h"

namespace xet {
namespace {

using testing::TempDir;

std::string DbPath(const TempDir& dir) { return dir.path() + "/index.db"; }

namespace fs = std::filesystem;
using Code = Status::Code;

// A deterministic hash from (tag, n). The last word is chosen so dedup eligibility is
// controlled by `eligible`.
Hash H(uint64_t tag, uint64_t n, bool eligible = false) {
  Hash h;
  uint64_t w[4] = {tag * 0x9E3779B97F4A7C15ULL + n, n ^ 0xABCDEF, tag + 7 * n + 1,
                   eligible ? (n + 1) * 1024 : (n + 1) * 1024 + 1};
  std::memcpy(h.mutable_data(), w, 32);
  return h;
}

XorbRecord MakeXorb(uint64_t n, size_t chunks = 8) {
  XorbRecord x;
  x.hash = H(1, n);
  uint32_t c = 0, u = 0;
  for (size_t i = 0; i < chunks; ++i) {
    c += 1000 + static_cast<uint32_t>(i);
    u += 2000 + static_cast<uint32_t>(i);
    // Chunk 0 is always dedup-eligible; make chunk 3 eligible by hash too.
    x.chunks.push_back({H(2, n * 1000 + i, i == 3), c, u});
  }
  x.object_size = c + 100;
  return x;
}

FileRecord MakeFile(uint64_t n, const std::vector<Hash>& xorbs, size_t terms = 3,
                    bool with_sha = true) {
  FileRecord f;
  f.file_hash = H(3, n);
  for (size_t i = 0; i < terms; ++i) {
    FileTerm t{xorbs[i % xorbs.size()], static_cast<uint32_t>(i), static_cast<uint32_t>(i + 2),
               static_cast<uint32_t>(4000 + i)};
    f.size += t.unpacked_bytes;
    f.terms.push_back(t);
  }
  if (with_sha) f.sha256 = H(4, n);
  return f;
}

TokenRecord MakeToken(uint64_t n, std::vector<Scope> scopes = {"ns/a"}) {
  TokenRecord t;
  t.id = "tok" + std::to_string(n);
  t.name = "token #" + std::to_string(n);
  t.secret_hash = H(5, n);
  t.permission = Permission::kWrite;
  t.scopes = std::move(scopes);
  t.created_at = 1700000000 + static_cast<int64_t>(n);
  t.expires_at = 0;
  return t;
}

std::unique_ptr<SqliteIndex> Open(const std::string& path) {
  auto index = SqliteIndex::Open(path, SqliteIndex::Options{});
  EXPECT_TRUE(index.ok()) << index.status().ToString();
  return index.ok() ? std::move(index).value() : nullptr;
}

std::vector<Scope> S(std::initializer_list<const char*> s) { return {s.begin(), s.end()}; }

TEST(IndexBlobs, RoundTripsAndRejectsPartialRecords) {
  XorbRecord x = MakeXorb(1);
  auto rows = DecodeChunkRows(EncodeChunkRows(x.chunks));
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, x.chunks);
  FileRecord f = MakeFile(1, {H(1, 1), H(1, 2)}, 5);
  auto terms = DecodeFileTerms(EncodeFileTerms(f.terms));
  ASSERT_TRUE(terms.ok());
  EXPECT_EQ(*terms, f.terms);
  EXPECT_TRUE(DecodeFileTerms({})->empty());
  std::vector<uint8_t> bad(kFileTermBlobSize + 1);
  EXPECT_EQ(DecodeFileTerms(bad).status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeChunkRows(std::vector<uint8_t>(39)).status().code(), Code::kCorruption);
  // Layout: little-endian fields after the hash.
  auto blob = EncodeFileTerms(std::vector<FileTerm>{{H(1, 1), 0x01020304, 5, 6}});
  ASSERT_EQ(blob.size(), 44u);
  EXPECT_EQ(blob[32], 0x04);
  EXPECT_EQ(blob[35], 0x01);
  EXPECT_EQ(blob[36], 5);
  EXPECT_EQ(blob[40], 6);
}

TEST(IndexBlobs, ScopeEncodings) {
  std::vector<Scope> scopes = S({"a/b", "c"});
  EXPECT_EQ(DecodeScopeList(*EncodeScopeList(scopes)), scopes);
  EXPECT_TRUE(DecodeScopeList(*EncodeScopeList({})).empty());
  EXPECT_EQ(EncodeScopeList(S({""})).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodeScopeList(S({"a\nb"})).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ScopesAsJson(S({"a\"b\\c", "\x01"})), "[\"a\\\"b\\\\c\",\"\\u0001\"]");
}

TEST(SqliteIndex, XorbRoundTripAndVisibility) {
  TempDir dir;
  auto index = Open(DbPath(dir));
  XorbRecord x = MakeXorb(7);
  EXPECT_FALSE(*index->HasXorb(x.hash));
  EXPECT_FALSE(index->GetXorb(x.hash)->has_value());
  auto put = index->PutXorb(x, "ns/a");
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_TRUE(*put);
  EXPECT_TRUE(*index->HasXorb(x.hash));
  auto got = index->GetXorb(x.hash);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, x);

  EXPECT_TRUE(*index->XorbVisible(x.hash, S({"ns/a"})));
  EXPECT_TRUE(*index->XorbVisible(x.hash, S({"ns/b", "ns/a"})));
  EXPECT_FALSE(*index->XorbVisible(x.hash, S({"ns/b"})));
  EXPECT_TRUE(*index->XorbVisible(x.hash, {}));  // admin: exists
  EXPECT_FALSE(*index->XorbVisible(H(1, 999), {}));

  // Second put: not new, but visibility for another scope is added.
  auto again = index->PutXorb(x, "ns/b");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_TRUE(*index->XorbVisible(x.hash, S({"ns/b"})));
  // An xorb without chunks round-trips too.
  XorbRecord empty;
  empty.hash = H(1, 8);
  ASSERT_TRUE(index->PutXorb(empty, "ns/a").ok());
  EXPECT_EQ(**index->GetXorb(empty.hash), empty);
}

TEST(SqliteIndex, XorbsVisibleAnswersEachHashInOneLookup) {
  TempDir dir;
  auto index = Open(DbPath(dir));
  XorbRecord a = MakeXorb(7), b = MakeXorb(8);
  ASSERT_TRUE(index->PutXorb(a, "ns/a").ok());
  ASSERT_TRUE(index->PutXorb(b, "ns/b").ok());
  const Hash unknown = H(1, 999);
  const std::vector<Hash> hashes = {a.hash, unknown, b.hash, a.hash};

  auto vis = index->XorbsVisible(hashes, S({"ns/a"}));
  ASSERT_TRUE(vis.ok()) << vis.status().ToString();
  EXPECT_EQ(*vis, (std::vector<bool>{true, false, false, true}));
  vis = index->XorbsVisible(hashes, S({"ns/b", "ns/a"}));
  ASSERT_TRUE(vis.ok());
  EXPECT_EQ(*vis, (std::vector<bool>{true, false, true, true}));
  vis = index->XorbsVisible(hashes, {});  // admin: exists
  ASSERT_TRUE(vis.ok());
  EXPECT_EQ(*vis, (std::vector<bool>{true, false, true, true}));
  vis = index->XorbsVisible({}, S({"ns/a"}));
  ASSERT_TRUE(vis.ok());
  EXPECT_TRUE(vis->empty());
  // The read transaction ended: a later write is seen by the next lookup.
  ASSERT_TRUE(index->PutXorb(b, "ns/a").ok());
  vis = index->XorbsVisible(hashes, S({"ns/a"}));
  ASSERT_TRUE(vis.ok());
  EXPECT_EQ(*vis, (std::vector<bool>{true, false, true, true}));
}

TEST(SqliteIndex, FileRoundTripAndVisibility) {
  TempDir dir;
  auto index = Open(DbPath(dir));
  XorbRecord x1 = MakeXorb(1), x2 = MakeXorb(2);
  ASSERT_TRUE(index->PutXorb(x1, "ns/a").ok());
  ASSERT_TRUE(index->PutXorb(x2, "ns/b").ok());
  FileRecord fa = MakeFile(1, {x1.hash}, 4);
  FileRecord fb = MakeFile(2, {x2.hash}, 2, /*with_sha=*/false);
  FileRecord fempty = MakeFile(3, {x1.hash}, 0, false);

  auto r = index->CommitShard({H(6, 1), "ns/a", {fa, fempty}, {x1.hash}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, ShardCommitResult::kRegistered);
  ASSERT_TRUE(index->CommitShard({H(6, 2), "ns/b", {fb}, {x2.hash}}).ok());

  EXPECT_EQ(**index->GetFile(fa.file_hash), fa);
  EXPECT_EQ(**index->GetFile(fb.file_hash), fb);
  EXPECT_EQ(**index->GetFile(fempty.file_hash), fempty);
  EXPECT_FALSE(index->GetFile(H(3, 99))->has_value());

  EXPECT_TRUE(*index->FileVisible(fa.file_hash, S({"ns/a"})));
  EXPECT_FALSE(*index->FileVisible(fa.file_hash, S({"ns/b"})));
  EXPECT_FALSE(*index->FileVisible(fb.file_hash, S({"ns/a"})));
  EXPECT_TRUE(*index->FileVisible(fb.file_hash, S({"ns/a", "ns/b"})));
  EXPECT_TRUE(*index->FileVisible(fa.file_hash, {}));
  EXPECT_TRUE(*index->FileVisible(fb.file_hash, {}));
  EXPECT_FALSE(*index->FileVisible(H(3, 99), {}));
  EXPECT_FALSE(*index->FileVisible(H(3, 99), S({"ns/a"})));
  // A scope that looks like SQL or JSON is just a string.
  EXPECT_FALSE(*index->FileVisible(fa.file_hash, S({"\"ns/a\"", "' OR 1=1 --", "]"})));
}

TEST(SqliteIndex, CommitShardIsIdempotentAndAddsVisibility) {
  TempDir dir;
  auto index = Open(DbPath(dir));
  XorbRecord x = MakeXorb(1);
  ASSERT_TRUE(index->PutXorb(x, "ns/a").ok());
  FileRecord f = MakeFile(1, {x.hash});
  ShardCommit c{H(6, 1), "ns/a", {f}, {x.hash}};
  EXPECT_EQ(*index->CommitShard(c), ShardCommitResult::kRegistered);
  EXPECT_EQ(*index->CommitShard(c), ShardCommitResult::kAlreadyExisted);
  // The same shard uploaded by another scope: already existed, but now visible to it too.
  c.scope = "ns/b";
  EXPECT_EQ(*index->CommitShard(c), ShardCommitResult::kAlreadyExisted);
  EXPECT_TRUE(*index->FileVisible(f.file_hash, S({"ns/b"})));
  EXPECT_TRUE(*index->XorbVisible(x.hash, S({"ns/b"})));
  // A different shard carrying a known file with other terms keeps the stored record.
  FileRecord changed = f;
  changed.terms.pop_back();
  EXPECT_EQ(*index->CommitShard({H(6, 2), "ns/c", {changed}, {}}), ShardCommitResult::kRegistered);
  EXPECT_EQ(**index->GetFile(f.file_hash), f);
  EXPECT_TRUE(*index->FileVisible(f.file_hash, S({"ns/c"})));
}

TEST(SqliteIndex, CommitShardWithUnknownXorbFailsWhole) {
  TempDir dir;
  auto index = Open(DbPath(dir));
  FileRecord f = MakeFile(1, {H(1, 1)});
  auto r = index->CommitShard({H(6, 1), "ns/a", {f}, {H(1, 1)}});
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
  // Nothing of it is visible: no file, and the shard can be committed later.
  EXPECT_FALSE(index->GetFile(f.file_hash)->has_value());
  ASSERT_TRUE(index->PutXorb(MakeXorb(1), "ns/a").ok());
  EXPECT_EQ(*index->CommitShard({H(6, 1), "ns/a", {f}, {H(1, 1)}}), ShardCommitResult::kRegistered);
}

TEST(SqliteIndex, FindXorbsWithChunkScopingOrderAndLimit) {
  TempDir dir;
  auto index = Open(DbPath(dir));
  // Five xorbs that all hold the same eligible chunk C (as chunk 3) and one as chunk 0.
  const Hash c = H(9, 1, /*eligible=*/true);
  const Hash first = H(9, 2);  // not eligible by hash, but a chunk 0
  std::vector<Hash> hashes;
  for (uint64_t n = 0; n < 5; ++n) {
    XorbRecord x = MakeXorb(100 + n);
    x.chunks[3].hash = c;
    if (n == 4) x.chunks[0].hash = first;
    hashes.push_back(x.hash);
    ASSERT_TRUE(index->PutXorb(x, n % 2 == 0 ? "ns/even" : "ns/odd").ok());
  }
  // Most recent first, all scopes.
  auto all = index->FindXorbsWithChunk(c, {}, 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (std::vector<Hash>{hashes[4], hashes[3], hashes[2], hashes[1], hashes[0]}));
  EXPECT_EQ(*index->FindXorbsWithChunk(c, {}, 2), (std::vector<Hash>{hashes[4], hashes[3]}));
  EXPECT_TRUE(index->FindXorbsWithChunk(c, {}, 0)->empty());
  EXPECT_EQ(*index->FindXorbsWithChunk(c, S({"ns/odd"}), 10),
            (std::vector<Hash>{hashes[3], hashes[1]}));
  EXPECT_EQ(*index->FindXorbsWithChunk(c, S({"ns/even"}), 2),
            (std::vector<Hash>{hashes[4], hashes[2]}));
  EXPECT_TRUE(index->FindXorbsWithChunk(c, S({"ns/none"}), 10)->empty());
  // Chunk 0 is indexed whatever its hash; other ineligible chunks are not.
  EXPECT_EQ(*index->FindXorbsWithChunk(first, {}, 10), (std::vector<Hash>{hashes[4]}));
  XorbRecord x0 = MakeXorb(100);
  EXPECT_TRUE(index->FindXorbsWithChunk(x0.chunks[1].hash, {}, 10)->empty());
  // Making an xorb visible to another scope (re-put) extends the dedup answer.
  XorbRecord again = MakeXorb(100);
  again.chunks[3].hash = c;
  ASSERT_TRUE(index->PutXorb(again, "ns/odd").ok());
  EXPECT_EQ(*index->FindXorbsWithChunk(c, S({"ns/odd"}), 10),
            (std::vector<Hash>{hashes[3], hashes[1], hashes[0]}));
}

TEST(SqliteIndex, Tokens) {
  TempDir dir;
  auto index = Open(DbPath(dir));
  TokenRecord a = MakeToken(1, S({"ns/a", "ns/b"}));
  TokenRecord admin = MakeToken(2, {});
  admin.permission = Permission::kAdmin;
  admin.expires_at = 1800000000;
  ASSERT_TRUE(index->PutToken(a).ok());
  ASSERT_TRUE(index->PutToken(admin).ok());
  EXPECT_EQ(**index->FindTokenBySecretHash(a.secret_hash), a);
  EXPECT_EQ(**index->FindTokenBySecretHash(admin.secret_hash), admin);
  EXPECT_FALSE(index->FindTokenBySecretHash(H(5, 99))->has_value());
  EXPECT_EQ(*index->ListTokens(), (std::vector<TokenRecord>{a, admin}));

  ASSERT_TRUE(index->RevokeToken(a.id).ok());
  a.revoked = true;
  EXPECT_EQ(**index->FindTokenBySecretHash(a.secret_hash), a);
  EXPECT_EQ(index->RevokeToken("nope").code(), Code::kNotFound);

  // Put of an existing id updates it; a secret hash used by another token is rejected.
  a.name = "renamed";
  ASSERT_TRUE(index->PutToken(a).ok());
  EXPECT_EQ((*index->FindTokenBySecretHash(a.secret_hash))->name, "renamed");
  TokenRecord dup = MakeToken(3);
  dup.secret_hash = admin.secret_hash;
  EXPECT_EQ(index->PutToken(dup).code(), Code::kInvalidArgument);
  EXPECT_EQ(index->ListTokens()->size(), 2u);
  TokenRecord bad = MakeToken(4, S({"a\nb"}));
  EXPECT_EQ(index->PutToken(bad).code(), Code::kInvalidArgument);
  bad = MakeToken(4);
  bad.id.clear();
  EXPECT_EQ(index->PutToken(bad).code(), Code::kInvalidArgument);
}

TEST(SqliteIndex, GroupCommitIsolatesAFailingOperation) {
  TempDir dir;
  auto index = Open(DbPath(dir));
  ASSERT_TRUE(index->PutToken(MakeToken(0)).ok());
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
        results[static_cast<size_t>(t)] = index->PutToken(tok);
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      const auto& tok = MakeToken(static_cast<uint64_t>(1000 * round + t + 1));
      if (t == 7) {
        EXPECT_EQ(results[7].code(), Code::kInvalidArgument) << results[7].ToString();
        EXPECT_FALSE(index->FindTokenBySecretHash(tok.secret_hash)->has_value());
      } else {
        EXPECT_TRUE(results[static_cast<size_t>(t)].ok())
            << results[static_cast<size_t>(t)].ToString();
        EXPECT_TRUE(index->FindTokenBySecretHash(tok.secret_hash)->has_value());
      }
    }
  }
  EXPECT_EQ(index->ListTokens()->size(), 1u + 5 * 15);
}

TEST(SqliteIndexGroupCommitter, FailingOperationRollsBackAloneInASharedTransaction) {
  TempDir dir;
  auto db = SqliteDb::Open(DbPath(dir), false, 5000);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Exec("PRAGMA journal_mode=WAL; CREATE TABLE t(k INTEGER PRIMARY KEY)").ok());
  SqliteGroupCommitter committer(std::move(db).value());
  // The first operation holds the writer so that the others queue up into one group.
  std::atomic<bool> release{false};
  std::thread blocker([&] {
    EXPECT_TRUE(committer
                    .Submit([&](SqliteDb&) {
                      while (!release.load()) std::this_thread::yield();
                      return Status::Ok();
                    })
                    .ok());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  constexpr int kOps = 12;
  std::vector<Status> results(kOps);
  std::vector<std::thread> threads;
  for (int i = 0; i < kOps; ++i) {
    threads.emplace_back([&, i] {
      results[static_cast<size_t>(i)] = committer.Submit([i](SqliteDb& d) -> Status {
        XET_RETURN_IF_ERROR(d.Exec("INSERT INTO t VALUES(" + std::to_string(i) + ")"));
        // Operation 5 writes, then fails: its insert must be rolled back.
        if (i == 5) return Status::InvalidArgument("op 5 fails");
        return Status::Ok();
      });
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  release = true;
  blocker.join();
  for (auto& t : threads) t.join();
  for (int i = 0; i < kOps; ++i) {
    EXPECT_EQ(results[static_cast<size_t>(i)].ok(), i != 5) << i;
  }
  const auto stats = committer.stats();
  EXPECT_EQ(stats.operations, kOps + 1u);
  EXPECT_LE(stats.transactions, 3u);  // the blocker's group, then (mostly) one group
  auto check = SqliteDb::Open(DbPath(dir), true, 5000);
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(*(*check)->QueryText("SELECT group_concat(k) FROM (SELECT k FROM t ORDER BY k)"),
            "0,1,2,3,4,6,7,8,9,10,11");
}

TEST(SqliteIndex, PersistsAcrossReopenAndMigrationIsIdempotent) {
  TempDir dir;
  XorbRecord x = MakeXorb(1);
  FileRecord f = MakeFile(1, {x.hash});
  TokenRecord t = MakeToken(1);
  {
    auto index = Open(DbPath(dir));
    ASSERT_TRUE(index->PutXorb(x, "ns/a").ok());
    ASSERT_TRUE(index->CommitShard({H(6, 1), "ns/a", {f}, {x.hash}}).ok());
    ASSERT_TRUE(index->PutToken(t).ok());
  }
  for (int i = 0; i < 2; ++i) {
    auto index = Open(DbPath(dir));
    ASSERT_NE(index, nullptr);
    EXPECT_EQ(**index->GetXorb(x.hash), x);
    EXPECT_EQ(**index->GetFile(f.file_hash), f);
    EXPECT_TRUE(*index->FileVisible(f.file_hash, S({"ns/a"})));
    EXPECT_EQ(**index->FindTokenBySecretHash(t.secret_hash), t);
    EXPECT_EQ(*index->CommitShard({H(6, 1), "ns/a", {f}, {x.hash}}),
              ShardCommitResult::kAlreadyExisted);
  }
  // Two indexes open on one file at once (the second migrates a current schema: no-op).
  auto a = Open(DbPath(dir));
  auto b = Open(DbPath(dir));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->PutXorb(MakeXorb(2), "ns/a").ok());
  EXPECT_TRUE(*b->HasXorb(MakeXorb(2).hash));
  a.reset();
  b.reset();
  auto db = SqliteDb::Open(DbPath(dir), true, 5000);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*(*db)->QueryText("SELECT group_concat(version) FROM schema_version"),
            std::to_string(SqliteSchemaVersion()));
  EXPECT_EQ(*(*db)->QueryText("PRAGMA journal_mode"), "wal");
}

TEST(SqliteIndex, RefusesANewerSchema) {
  TempDir dir;
  { ASSERT_NE(Open(DbPath(dir)), nullptr); }
  {
    auto db = SqliteDb::Open(DbPath(dir), false, 5000);
    ASSERT_TRUE((*db)->Exec("UPDATE schema_version SET version = 999").ok());
  }
  auto index = SqliteIndex::Open(DbPath(dir), {});
  EXPECT_FALSE(index.ok());
}

TEST(SqliteIndex, CorruptedBlobsAreCorruptionNotCrashes) {
  TempDir dir;
  XorbRecord x = MakeXorb(1);
  FileRecord f = MakeFile(1, {x.hash});
  TokenRecord t = MakeToken(1);
  {
    auto index = Open(DbPath(dir));
    ASSERT_TRUE(index->PutXorb(x, "ns/a").ok());
    ASSERT_TRUE(index->CommitShard({H(6, 1), "ns/a", {f}, {x.hash}}).ok());
    ASSERT_TRUE(index->PutToken(t).ok());
  }
  {
    auto db = SqliteDb::Open(DbPath(dir), false, 5000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("UPDATE files SET terms = x'0102030405'; "
                           "UPDATE xorbs SET chunks = zeroblob(41); "
                           "UPDATE tokens SET permission = 9;")
                    .ok());
  }
  auto index = Open(DbPath(dir));
  EXPECT_EQ(index->GetFile(f.file_hash).status().code(), Code::kCorruption);
  EXPECT_EQ(index->GetXorb(x.hash).status().code(), Code::kCorruption);
  EXPECT_EQ(index->FindTokenBySecretHash(t.secret_hash).status().code(), Code::kCorruption);
  EXPECT_EQ(index->ListTokens().status().code(), Code::kCorruption);
  {
    auto db = SqliteDb::Open(DbPath(dir), false, 5000);
    ASSERT_TRUE((*db)
                    ->Exec("UPDATE files SET terms = x'', sha256 = x'00'; "
                           "UPDATE xorbs SET chunks = x'', object_size = -1")
                    .ok());
  }
  EXPECT_EQ(index->GetFile(f.file_hash).status().code(), Code::kCorruption);
  EXPECT_EQ(index->GetXorb(x.hash).status().code(), Code::kCorruption);
}

TEST(SqliteIndex, LargeFileIsOneRow) {
  TempDir dir;
  auto index = Open(DbPath(dir));
  XorbRecord x = MakeXorb(1);
  ASSERT_TRUE(index->PutXorb(x, "ns/a").ok());
  FileRecord f = MakeFile(1, {x.hash}, 100000);
  ASSERT_TRUE(index->CommitShard({H(6, 1), "ns/a", {f}, {x.hash}}).ok());
  EXPECT_EQ(**index->GetFile(f.file_hash), f);
  auto db = SqliteDb::Open(DbPath(dir), true, 5000);
  EXPECT_EQ(*(*db)->QueryText("SELECT count(*) || ':' || sum(length(terms)) FROM files"),
            "1:" + std::to_string(100000 * kFileTermBlobSize));
}

TEST(SqliteIndex, ConcurrentMixedReadsAndWrites) {
  TempDir dir;
  auto index = Open(DbPath(dir));
  constexpr int kThreads = 16, kPerThread = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Scope scope = "ns/" + std::to_string(t % 4);
      for (int i = 0; i < kPerThread; ++i) {
        const uint64_t n = static_cast<uint64_t>(t * 1000 + i);
        XorbRecord x = MakeXorb(n, 4);
        FileRecord f = MakeFile(n, {x.hash}, 4);
        bool ok = index->PutXorb(x, scope).ok();
        auto r = index->CommitShard({H(6, n), scope, {f}, {x.hash}});
        ok = ok && r.ok() && *r == ShardCommitResult::kRegistered;
        auto got = index->GetFile(f.file_hash);
        ok = ok && got.ok() && got->has_value() && **got == f;
        auto vis = index->FileVisible(f.file_hash, std::vector<Scope>{scope});
        ok = ok && vis.ok() && *vis;
        auto gx = index->GetXorb(x.hash);
        ok = ok && gx.ok() && gx->has_value() && **gx == x;
        // Read something another thread wrote (may or may not exist yet).
        auto other = index->GetFile(H(3, static_cast<uint64_t>(((t + 1) % kThreads) * 1000 + i)));
        ok = ok && other.ok();
        auto found = index->FindXorbsWithChunk(x.chunks[0].hash, std::vector<Scope>{scope}, 5);
        ok = ok && found.ok() && found->size() == 1 && (*found)[0] == x.hash;
        if (i % 5 == 0) ok = ok && index->PutToken(MakeToken(n)).ok();
        if (!ok) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(index->ListTokens()->size(), static_cast<size_t>(kThreads * kPerThread / 5));
  const auto stats = index->WriteStats();
  EXPECT_EQ(stats.operations, static_cast<uint64_t>(kThreads * kPerThread * 2 + 16 * 5));
}

// --- crash test ---

// What the child acknowledges over the pipe after each durable call.
void ChildLoop(const std::string& dir, uint64_t base, int fd) {
  auto index = SqliteIndex::Open(dir + "/index.db", {});
  auto store = LocalObjectStore::Open(dir + "/objects");
  if (!index.ok() || !store.ok()) ::_exit(2);
  auto say = [fd](char kind, uint64_t n) {
    std::string line = std::string(1, kind) + " " + std::to_string(n) + "\n";
    if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) ::_exit(3);
  };
  // Several writer threads, so groups of commits are in flight when the kill lands.
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t i = 0;; ++i) {
        const uint64_t n = base + i * 4 + t;
        XorbRecord x = MakeXorb(n, 4);
        std::vector<uint8_t> bytes(20000 + n % 1000, static_cast<uint8_t>(n));
        if (!(*store)->Put(XorbKey(x.hash), bytes).ok()) ::_exit(4);
        say('o', n);
        if (!(*index)->PutXorb(x, "ns/crash").ok()) ::_exit(5);
        say('x', n);
        if (!(*index)->CommitShard({H(6, n), "ns/crash", {MakeFile(n, {x.hash})}, {x.hash}}).ok())
          ::_exit(6);
        say('s', n);
      }
    });
  }
  for (auto& th : threads) th.join();
  ::_exit(0);
}

TEST(SqliteIndexCrash, SigkillLeavesACommittedConsistentState) {
  TempDir dir;
  std::mt19937_64 rng(12345);
  std::map<char, std::set<uint64_t>> acked;
  for (uint64_t iter = 0; iter < 5; ++iter) {
    int pipefd[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(pipefd[0]);
      ChildLoop(dir.path(), (iter + 1) * 1000000, pipefd[1]);
    }
    ::close(pipefd[1]);
    // Let the child get a random amount of work acknowledged, then kill it a random few
    // milliseconds later, mid-operation.
    const size_t target_lines = 5 + rng() % 150;
    std::string text;
    char buf[4096];
    auto lines_in = [&] { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); };
    while (lines_in() < target_lines) {
      const ssize_t got = ::read(pipefd[0], buf, sizeof(buf));
      if (got <= 0) break;  // the child died on its own: reported below
      text.append(buf, static_cast<size_t>(got));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 10000));
    ::kill(pid, SIGKILL);
    int wstatus = 0;
    ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited early with " << WEXITSTATUS(wstatus);
    for (ssize_t got; (got = ::read(pipefd[0], buf, sizeof(buf))) > 0;) {
      text.append(buf, static_cast<size_t>(got));
    }
    ::close(pipefd[0]);
    std::istringstream lines(text);
    char kind;
    uint64_t n;
    size_t count = 0;
    while (lines >> kind >> n) {
      acked[kind].insert(n);
      ++count;
    }
    EXPECT_GT(count, 0u) << "iteration " << iter << " acknowledged nothing";

    // Reopen everything and check every acknowledged write.
    auto store = LocalObjectStore::Open(dir.path() + "/objects");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto index = SqliteIndex::Open(dir.path() + "/index.db", {});
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    for (uint64_t o : acked['o']) {
      auto got = (*store)->Get(XorbKey(MakeXorb(o, 4).hash));
      ASSERT_TRUE(got.ok()) << o << " " << got.status().ToString();
      EXPECT_EQ(*got, std::vector<uint8_t>(20000 + o % 1000, static_cast<uint8_t>(o)));
    }
    for (uint64_t x : acked['x']) {
      auto got = (*index)->GetXorb(MakeXorb(x, 4).hash);
      ASSERT_TRUE(got.ok() && got->has_value()) << x;
      EXPECT_EQ(**got, MakeXorb(x, 4));
    }
    for (uint64_t s : acked['s']) {
      const FileRecord f = MakeFile(s, {MakeXorb(s, 4).hash});
      auto got = (*index)->GetFile(f.file_hash);
      ASSERT_TRUE(got.ok() && got->has_value()) << s;
      EXPECT_EQ(**got, f);
      EXPECT_TRUE(*(*index)->FileVisible(f.file_hash, S({"ns/crash"})));
    }
    // Every object in the store is whole (no partial object under a final name) and no
    // temporary file survived the reopen.
    for (const auto& e : fs::recursive_directory_iterator(dir.path() + "/objects")) {
      const std::string name = e.path().filename().string();
      EXPECT_FALSE(name.starts_with(".tmp-")) << e.path();
      if (e.is_regular_file()) {
        auto hash = Hash::FromHex(name);
        ASSERT_TRUE(hash.has_value()) << name;
        const uint64_t on = hash->Word(0) - 0x9E3779B97F4A7C15ULL;  // n, see H()
        EXPECT_EQ(e.file_size(), 20000 + on % 1000) << name;
      }
    }
    auto db = SqliteDb::Open(dir.path() + "/index.db", true, 5000);
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(*(*db)->QueryText("PRAGMA integrity_check"), "ok");
    EXPECT_EQ(*(*db)->QueryText("SELECT count(*) FROM pragma_foreign_key_check"), "0");
  }
}

}  // namespace
}  // namespace xet
