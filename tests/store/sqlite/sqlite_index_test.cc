// SqliteIndex beyond the Index contract (that is tests/store/index_contract_test.cc): record
// blobs, the group committer's per-operation rollback and counters, schema migration, a
// newer schema, corrupted blobs, one row per file, and a SIGKILL crash test (together with
// LocalObjectStore).
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

#include "store/index_blobs.h"
#include "store/index_mixed_workload.h"
#include "store/index_test_records.h"
#include "store/local/local_object_store.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/sqlite_group_commit.h"
#include "store/sqlite/sqlite_schema.h"
#include "support/temp_dir.h"

namespace xet::testing::index_test {
namespace {

std::string DbPath(const TempDir& dir) { return dir.path() + "/index.db"; }

namespace fs = std::filesystem;
using Code = Status::Code;

std::unique_ptr<SqliteIndex> Open(const std::string& path) {
  auto index = SqliteIndex::Open(path, SqliteIndex::Options{});
  EXPECT_TRUE(index.ok()) << index.status().ToString();
  return index.ok() ? std::move(index).value() : nullptr;
}

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

TEST(SqliteIndex, MigrationIsIdempotentAndTwoIndexesShareAFile) {
  TempDir dir;
  {
    auto index = Open(DbPath(dir));
    ASSERT_TRUE(index->PutXorb(MakeXorb(1), "ns/a").ok());
  }
  // Reopening migrates a current schema: a no-op (the data survive: IndexContract).
  for (int i = 0; i < 2; ++i) ASSERT_NE(Open(DbPath(dir)), nullptr);
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

// A dedup answer counts as seeing its xorbs (index.h, "operator tools"): a stamp older than
// kSeenStampRefreshMs is raised to now, a newer one is left alone (no write).
TEST(SqliteIndex, DedupAnswersRefreshStaleStamps) {
  TempDir dir("xet-sqlite-index");
  auto index = Open(DbPath(dir));
  ASSERT_NE(index, nullptr);
  const XorbRecord old = MakeXorb(1), fresh = MakeXorb(2);
  ASSERT_TRUE(index->PutXorb(old, "ns/a").ok());
  ASSERT_TRUE(index->PutXorb(fresh, "ns/a").ok());
  {
    auto db = SqliteDb::Open(DbPath(dir), false, 5000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("UPDATE xorbs SET seen_at_ms = 5").ok());
  }
  const int64_t before = *index->IndexClockMs();
  ASSERT_EQ(*index->FindXorbsWithChunk(old.chunks[0].hash, S({"ns/a"}), 4),
            std::vector<Hash>{old.hash});
  std::map<Hash, int64_t> seen;
  ASSERT_TRUE(index
                  ->ForEachXorbRow([&](const Index::GcXorbRow& r) {
                    seen[r.hash] = r.seen_at_ms;
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_GE(seen[old.hash], before);  // handed out: refreshed
  EXPECT_EQ(seen[fresh.hash], 5);     // not asked for: untouched
  // Retirement with a cutoff before the refresh keeps it.
  EXPECT_TRUE(index->RetireXorbs(std::vector<Hash>{old.hash}, before, false)->empty());
  EXPECT_EQ(*index->RetireXorbs(std::vector<Hash>{fresh.hash}, before, false),
            std::vector<Hash>{fresh.hash});
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
  // The file's terms are one blob (IndexContract.LargeFileRoundTrips reads them back).
  auto db = SqliteDb::Open(DbPath(dir), true, 5000);
  EXPECT_EQ(*(*db)->QueryText("SELECT count(*) || ':' || sum(length(terms)) FROM files"),
            "1:" + std::to_string(100000 * kFileTermBlobSize));
}

// IndexContract.ConcurrentMixedReadsAndWrites checks the answers; here, that every write
// went through the group committer.
TEST(SqliteIndex, ConcurrentMixedReadsAndWritesAreAllCommitted) {
  TempDir dir;
  auto index = Open(DbPath(dir));
  EXPECT_EQ(RunMixedReadsAndWrites(*index), 0);
  const auto stats = index->WriteStats();
  EXPECT_EQ(stats.operations, kMixedWrites);
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
}  // namespace xet::testing::index_test
