// PostgresIndex beyond the Index contract (that runs in postgres_index_contract_test.cc):
// schema migrations, a newer schema, the pool's reconnects after killed connections and a
// server restart, retried serialization failures, concurrent shard commits from many
// connections, and hostile strings (which must travel as parameters, never as SQL).
#include "store/postgres/postgres_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "store/index_test_records.h"
#include "store/postgres/pg_connection.h"
#include "store/postgres/pg_schema.h"
#include "store/postgres/postgres_index_backend.h"
#include "support/temp_dir.h"

namespace xet::testing::index_test {
namespace {

using Code = Status::Code;

class PostgresIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.started());
    auto url = PostgresScratchUrl(scratch_.path());
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    url_ = *url;
    db_ = PostgresDbName(scratch_.path());
  }

  std::unique_ptr<PostgresIndex> Open(PostgresIndex::Options opts = {}) {
    auto index = PostgresIndex::Open(url_, opts);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return index.ok() ? std::move(index).value() : nullptr;
  }

  // The first column of the first row of `sql`, as an integer, from a fresh connection.
  int64_t QueryInt(const std::string& sql) {
    auto conn = PgConnection::Connect(url_);
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    if (!conn.ok()) return -1;
    auto r = (*conn)->Exec(sql);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || r->rows() == 0) return -1;
    return r->Int(0, 0);
  }

  PostgresTestServer& server_ = PostgresTestServer::Shared();
  TempDir scratch_{"xet-pg"};
  std::string url_;
  std::string db_;
};

TEST_F(PostgresIndexTest, MigratesAnEmptyDatabaseAndReopensWithoutMigratingAgain) {
  ASSERT_NE(Open(), nullptr);
  EXPECT_EQ(QueryInt("SELECT version FROM schema_version"), PostgresSchemaVersion());
  EXPECT_EQ(QueryInt("SELECT count(*) FROM schema_version"), 1);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM information_schema.tables WHERE table_name IN "
                     "('xorbs','xorb_scopes','dedup_chunks','files','file_scopes','shards',"
                     "'tokens','buckets','bucket_entries')"),
            9);
  auto index = Open();
  ASSERT_NE(index, nullptr);
  ASSERT_TRUE(index->PutXorb(MakeXorb(1), "ns/a").ok());
  index.reset();
  index = Open();
  ASSERT_NE(index, nullptr);
  EXPECT_TRUE(*index->HasXorb(MakeXorb(1).hash));
  EXPECT_EQ(QueryInt("SELECT count(*) FROM schema_version"), 1);
}

TEST_F(PostgresIndexTest, ConcurrentOpensOfAnEmptyDatabaseMigrateOnce) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      auto index = PostgresIndex::Open(url_, {});
      if (!index.ok()) failures++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM schema_version"), 1);
  EXPECT_EQ(QueryInt("SELECT version FROM schema_version"), PostgresSchemaVersion());
}

TEST_F(PostgresIndexTest, AVersion1DatabaseGainsStampsOfTheUpgrade) {
  {
    auto index = Open();
    ASSERT_NE(index, nullptr);
    ASSERT_TRUE(index->PutXorb(MakeXorb(1), "ns/a").ok());
  }
  // Turn the database back into what a version-1 binary left behind.
  ASSERT_EQ(server_.Exec(db_,
                         "ALTER TABLE xorbs DROP COLUMN seen_at_ms; ALTER TABLE files DROP COLUMN "
                         "seen_at_ms; ALTER TABLE shards DROP COLUMN seen_at_ms; DROP TABLE "
                         "gc_pending; UPDATE schema_version SET version = 1"),
            "");
  auto index = Open();
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(QueryInt("SELECT version FROM schema_version"), PostgresSchemaVersion());
  // The xorb counts as seen at the upgrade: an hour's grace keeps it.
  auto now = index->IndexClockMs();
  ASSERT_TRUE(now.ok());
  EXPECT_TRUE(
      index->RetireXorbs(std::vector<Hash>{MakeXorb(1).hash}, *now - 3'600'000, false)->empty());
  // New rows are stamped by the database's clock.
  ASSERT_TRUE(index->PutXorb(MakeXorb(2), "ns/a").ok());
  EXPECT_GE(QueryInt("SELECT min(seen_at_ms) FROM xorbs"), *now - 60'000);
}

// A dedup answer counts as seeing its xorbs (index.h, "operator tools"): a stamp older than
// kSeenStampRefreshMs is raised to the database's now, a newer one is left alone.
TEST_F(PostgresIndexTest, DedupAnswersRefreshStaleStamps) {
  auto index = Open();
  ASSERT_NE(index, nullptr);
  const XorbRecord old = MakeXorb(1), fresh = MakeXorb(2);
  ASSERT_TRUE(index->PutXorb(old, "ns/a").ok());
  ASSERT_TRUE(index->PutXorb(fresh, "ns/a").ok());
  ASSERT_EQ(server_.Exec(db_, "UPDATE xorbs SET seen_at_ms = 5"), "");
  const int64_t before = *index->IndexClockMs();
  ASSERT_EQ(*index->FindXorbsWithChunk(old.chunks[0].hash, S({"ns/a"}), 4),
            std::vector<Hash>{old.hash});
  EXPECT_GE(QueryInt("SELECT max(seen_at_ms) FROM xorbs"), before);
  EXPECT_EQ(QueryInt("SELECT min(seen_at_ms) FROM xorbs"), 5);
  EXPECT_TRUE(index->RetireXorbs(std::vector<Hash>{old.hash}, before, false)->empty());
  EXPECT_EQ(*index->RetireXorbs(std::vector<Hash>{fresh.hash}, before, false),
            std::vector<Hash>{fresh.hash});
}

TEST_F(PostgresIndexTest, RefusesADatabaseNewerThanThisBinary) {
  ASSERT_NE(Open(), nullptr);
  const std::string newer = std::to_string(PostgresSchemaVersion() + 1);
  ASSERT_EQ(server_.Exec(db_, "UPDATE schema_version SET version = " + newer), "");
  auto index = PostgresIndex::Open(url_, {});
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), Code::kInternal);
  EXPECT_NE(index.status().message().find("newer than this xetstore supports"), std::string::npos)
      << index.status().ToString();
}

TEST_F(PostgresIndexTest, OpenFailsClearlyWithoutAServer) {
  auto index = PostgresIndex::Open("postgresql:///nowhere?host=/nonexistent&port=1", {});
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), Code::kUnavailable) << index.status().ToString();
}

TEST_F(PostgresIndexTest, ReconnectsAfterItsConnectionsAreTerminated) {
  PostgresIndex::Options opts;
  opts.max_connections = 3;
  auto index = Open(opts);
  ASSERT_NE(index, nullptr);
  ASSERT_TRUE(index->PutXorb(MakeXorb(1), "ns/a").ok());
  // Fill the pool: three threads holding a connection each at once.
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) EXPECT_TRUE(index->HasXorb(MakeXorb(1).hash).ok());
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(server_.Exec(db_,
                         "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                         "datname = current_database() AND pid <> pg_backend_pid()"),
            "");
  // Every idle connection of the pool is dead now: each call still succeeds.
  for (int i = 0; i < 6; ++i) {
    auto has = index->HasXorb(MakeXorb(1).hash);
    ASSERT_TRUE(has.ok()) << has.status().ToString();
    EXPECT_TRUE(*has);
  }
  ASSERT_TRUE(index->PutXorb(MakeXorb(2), "ns/a").ok());
  EXPECT_TRUE(*index->HasXorb(MakeXorb(2).hash));
  EXPECT_GT(index->pool().retries(), 0u);
}

TEST_F(PostgresIndexTest, ReconnectsAfterTheServerRestarts) {
  TempDir root{"xet-pg-restart"};
  PostgresTestServer server(root.path() + "/cluster");
  ASSERT_TRUE(server.started());
  ASSERT_EQ(server.CreateDatabase("restart"), "");
  auto index = PostgresIndex::Open(server.Url("restart"), {});
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  ASSERT_TRUE((*index)->CreateBucket("ns", "b", true, 1).ok());
  server.Stop();
  EXPECT_FALSE((*index)->GetBucket("ns", "b").ok());  // down: an error, not a hang or a crash
  server.Start();
  ASSERT_TRUE(server.started());
  auto bucket = (*index)->GetBucket("ns", "b");
  ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
  EXPECT_TRUE(bucket->has_value());
  EXPECT_TRUE((*index)->CreateBucket("ns", "c", true, 2).ok());
}

// Two or more connections racing read-modify-write transactions on one row at REPEATABLE
// READ: the losers fail with 40001 and RunTransaction runs them again; no update is lost.
TEST_F(PostgresIndexTest, RetriesSerializationFailuresWithoutLosingUpdates) {
  auto index = Open();
  ASSERT_NE(index, nullptr);
  index->pool().policy().max_attempts = 100;
  ASSERT_EQ(server_.Exec(db_,
                         "CREATE TABLE counter(n BIGINT NOT NULL); "
                         "INSERT INTO counter VALUES (0)"),
            "");
  constexpr int kThreads = 4, kPerThread = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        Status st = index->pool().RunTransaction(
            PgIsolation::kRepeatableRead, false, [](PgConnection& conn) -> Status {
              XET_ASSIGN_OR_RETURN(PgResult r, conn.Exec("SELECT n FROM counter"));
              const int64_t n = r.Int(0, 0);
              std::this_thread::sleep_for(std::chrono::microseconds(200));
              return conn.Exec("UPDATE counter SET n = $1", PgParams().Int(n + 1)).status();
            });
        if (!st.ok()) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(QueryInt("SELECT n FROM counter"), kThreads * kPerThread);
  EXPECT_GT(index->pool().retries(), 0u);
}

// Many nodes registering shards that share files, each listing them in its own order: every
// commit succeeds (lock order is fixed; a deadlock would be retried), each file is stored
// once, and every scope sees the files it registered.
TEST_F(PostgresIndexTest, ConcurrentShardCommitsOfSharedFilesAllRegister) {
  auto index = Open();
  ASSERT_NE(index, nullptr);
  const XorbRecord x = MakeXorb(1);
  ASSERT_TRUE(index->PutXorb(x, "setup").ok());
  constexpr int kThreads = 6, kShared = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ShardCommit c;
      c.shard_hash = H(9, static_cast<uint64_t>(t));
      c.scope = "ns/s" + std::to_string(t);
      c.xorbs = {x.hash};
      for (int i = 0; i < kShared; ++i) c.files.push_back(MakeFile(i, {x.hash}));
      c.files.push_back(MakeFile(1000 + t, {x.hash}));
      std::shuffle(c.files.begin(), c.files.end(), std::mt19937(static_cast<unsigned>(t)));
      auto r = index->CommitShard(c);
      if (!r.ok() || *r != ShardCommitResult::kRegistered) failures++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM files"), kShared + kThreads);
  for (int t = 0; t < kThreads; ++t) {
    const Scope scope = "ns/s" + std::to_string(t);
    EXPECT_TRUE(*index->FileVisible(MakeFile(7, {x.hash}).file_hash, {&scope, 1}));
    EXPECT_TRUE(*index->FileVisible(MakeFile(1000 + t, {x.hash}).file_hash, {&scope, 1}));
    const Scope other = "ns/s" + std::to_string((t + 1) % kThreads);
    EXPECT_FALSE(*index->FileVisible(MakeFile(1000 + t, {x.hash}).file_hash, {&other, 1}));
  }
  auto f = index->GetFile(MakeFile(5, {x.hash}).file_hash);
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ(**f, MakeFile(5, {x.hash}));
}

// Shard commits that name overlapping sets of a few xorbs, from many connections: each
// stamps (and locks) its xorbs in hash order, so none waits on another in a cycle. Stamping
// in scan order deadlocked here: every stamp moves a row version, and the scan orders of
// two transactions differ. No commit needs a retry, and every one registers.
TEST_F(PostgresIndexTest, ShardCommitsSharingXorbsNeverDeadlock) {
  auto index = Open();
  ASSERT_NE(index, nullptr);
  constexpr int kXorbs = 8, kThreads = 8, kPerThread = 25;
  std::vector<Hash> xorbs;
  for (int i = 0; i < kXorbs; ++i) {
    const XorbRecord x = MakeXorb(static_cast<uint64_t>(i + 1));
    ASSERT_TRUE(index->PutXorb(x, "ns/a").ok());
    xorbs.push_back(x.hash);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < kPerThread; ++i) {
        std::vector<Hash> named = xorbs;
        std::shuffle(named.begin(), named.end(), rng);
        named.resize(4);
        ShardCommit c;
        c.shard_hash = H(11, static_cast<uint64_t>(t * kPerThread + i));
        c.scope = "ns/a";
        c.xorbs = named;
        c.files.push_back(MakeFile(5000 + t * kPerThread + i, named));
        auto r = index->CommitShard(c);
        if (!r.ok() || *r != ShardCommitResult::kRegistered) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(index->pool().retries(), 0u);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM shards"), kThreads * kPerThread);
}

// A shard commit leaves a xorb stamp newer than the slack alone (pg_schema.cc, migration 4)
// and stamps an older one; a gc whose clock is read while that commit runs gets a cutoff no
// later than the stamp left alone, so it retires neither xorb.
TEST_F(PostgresIndexTest, CommitsLeaveFreshStampsAloneAndGcCutoffsStayBelowThem) {
  auto index = Open();
  ASSERT_NE(index, nullptr);
  const XorbRecord fresh = MakeXorb(1), stale = MakeXorb(2);
  ASSERT_TRUE(index->PutXorb(fresh, "ns/a").ok());
  ASSERT_TRUE(index->PutXorb(stale, "ns/a").ok());
  const std::string seen_of_fresh = "SELECT seen_at_ms FROM xorbs ORDER BY id LIMIT 1";
  const std::vector<Hash> named = {fresh.hash, stale.hash};
  auto conn = PgConnection::Connect(url_);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  // The fresh stamp sits 200 ms inside the slack: the commit must start within 200 ms of it
  // to leave it alone, so a stalled machine gets a few tries.
  bool left_alone = false;
  int64_t fresh_seen = 0;
  for (uint64_t attempt = 0; attempt < 5 && !left_alone; ++attempt) {
    ASSERT_EQ(server_.Exec(db_,
                           "UPDATE xorbs SET seen_at_ms = CASE WHEN id = (SELECT min(id) "
                           "FROM xorbs) THEN (extract(epoch from clock_timestamp()) * "
                           "1000)::bigint - xet_stamp_slack_ms() + 200 ELSE 5 END"),
              "");
    fresh_seen = QueryInt(seen_of_fresh);
    ASSERT_TRUE((*conn)->ExecSimple("BEGIN").ok());
    auto r = (*conn)->Exec(
        "SELECT xet_commit_shard($1, 'shards/x', 'ns/a', 0, $2::bytea[], '{}', '{}', '{}', "
        "'{}', '{}')",
        PgParams().Hash(H(12, attempt)).HashArray(named));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto seen = (*conn)->Exec("SELECT seen_at_ms FROM xorbs ORDER BY id");
    ASSERT_TRUE(seen.ok()) << seen.status().ToString();
    EXPECT_GT(seen->Int(1, 0), 5);  // the stale stamp is always renewed
    left_alone = seen->Int(0, 0) == fresh_seen;
    if (!left_alone) {
      ASSERT_TRUE((*conn)->ExecSimple("ROLLBACK").ok());
    }
  }
  ASSERT_TRUE(left_alone) << "five commits in a row started over 200 ms after the stamp";
  // The commit is still in progress: gc's clock, and so any cutoff, stays below its stamps.
  auto cutoff = index->IndexClockMs();
  ASSERT_TRUE(cutoff.ok()) << cutoff.status().ToString();
  EXPECT_LE(*cutoff, fresh_seen);
  ASSERT_TRUE((*conn)->ExecSimple("COMMIT").ok());
  auto retired = index->RetireXorbs(named, *cutoff, false);
  ASSERT_TRUE(retired.ok()) << retired.status().ToString();
  EXPECT_TRUE(retired->empty());
  EXPECT_TRUE(*index->HasXorb(fresh.hash));
  EXPECT_TRUE(*index->HasXorb(stale.hash));
  // Once the commit is over, gc's clock (read after sleeping the slack) passes both stamps.
  auto later = index->IndexClockMs();
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  EXPECT_GT(*later, QueryInt("SELECT max(seen_at_ms) FROM xorbs"));
}

// The commit function's gc checks need a snapshot per query: at another isolation level (a
// pooler in transaction mode drops the connection's own SET) it refuses to run.
TEST_F(PostgresIndexTest, TheCommitFunctionRefusesOtherIsolationLevels) {
  ASSERT_NE(Open(), nullptr);
  auto conn = PgConnection::Connect(url_);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  ASSERT_TRUE((*conn)->ExecSimple("SET default_transaction_isolation = 'repeatable read'").ok());
  auto r = (*conn)->Exec(
      "SELECT xet_commit_shard($1, 'shards/x', 'ns/a', 0, '{}', '{}', '{}', '{}', '{}', '{}')",
      PgParams().Hash(H(12, 1)));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("needs READ COMMITTED, not repeatable read"),
            std::string::npos)
      << r.status().ToString();
  EXPECT_EQ(QueryInt("SELECT count(*) FROM shards"), 0);
}

// Quotes, backslashes, SQL fragments, placeholders, LIKE wildcards, non-ASCII text and (in
// content types) arbitrary bytes in every string the index stores: stored and read back verbatim,
// and the tables survive.
TEST_F(PostgresIndexTest, HostileStringsAreValuesNotSql) {
  auto index = Open();
  ASSERT_NE(index, nullptr);
  const std::string ns = "o'brien";
  const std::string name = "b\"; DROP TABLE files; --";
  ASSERT_TRUE(index->CreateBucket(ns, name, false, 1).ok());
  const Scope scope = ns + "/" + name;
  const XorbRecord x = MakeXorb(1);
  ASSERT_TRUE(index->PutXorb(x, scope).ok());
  ShardCommit c;
  c.shard_hash = H(9, 1);
  c.scope = scope;
  c.xorbs = {x.hash};
  c.files = {MakeFile(1, {x.hash}), MakeFile(2, {x.hash})};
  ASSERT_TRUE(index->CommitShard(c).ok());
  const std::vector<std::string> paths = {
      "a'; DELETE FROM bucket_entries; --", "a%/x", "a_/y", "a\\b", "$1",
      "\xc3\xa9t\xc3\xa9/\xe6\x97\xa5"};
  // Content types are bytes as the client sent them (here not even UTF-8, with a NUL).
  const char raw_type[] = "text/plain'; DROP TABLE buckets; --\xff\0!";
  const std::string type(raw_type, sizeof(raw_type) - 1);
  std::vector<BucketOp> ops;
  for (const std::string& p : paths) {
    BucketOp op;
    op.kind = BucketOp::Kind::kAddFile;
    op.path = p;
    op.file_hash = MakeFile(1, {x.hash}).file_hash;
    op.content_type = type;
    ops.push_back(op);
  }
  auto r = index->ApplyBucketBatch(ns, name, ops, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->succeeded, paths.size());
  for (const std::string& p : paths) {
    auto e = index->GetBucketEntry(ns, name, p);
    ASSERT_TRUE(e.ok() && e->has_value()) << p;
    EXPECT_EQ((*e)->path, p);
    EXPECT_EQ((*e)->content_type, type);
  }
  // "a%" and "a_" are directories of their own, not patterns.
  auto page = index->ListBucketTree(ns, name, "a%", true, "", 100);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].path, "a%/x");
  // Search text is a substring, not a pattern.
  EXPECT_EQ(index->ListBuckets("", "%", "", 10)->size(), 0u);
  EXPECT_EQ(index->ListBuckets("", "drop table", "", 10)->size(), 1u);

  TokenRecord t = MakeToken(1, {scope, "x'); DELETE FROM tokens; --"});
  t.id = "id'--";
  t.name = "Robert'); DROP TABLE tokens;--";
  ASSERT_TRUE(index->PutToken(t).ok());
  TokenRecord bad = MakeToken(2);
  bad.name = std::string("nul\0inside", 10);
  EXPECT_EQ(index->PutToken(bad).code(), Code::kInvalidArgument);
  auto tokens = index->ListTokens();
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 1u);
  EXPECT_EQ((*tokens)[0], t);
  EXPECT_TRUE(*index->FileVisible(MakeFile(2, {x.hash}).file_hash, {&scope, 1}));
  ASSERT_TRUE(index->MoveBucket(ns, name, "n'2", "m\\", 3).ok());
  const Scope moved = "n'2/m\\";
  EXPECT_TRUE(*index->FileVisible(MakeFile(1, {x.hash}).file_hash, {&moved, 1}));
  EXPECT_EQ(QueryInt("SELECT count(*) FROM bucket_entries"), static_cast<int64_t>(paths.size()));
}

}  // namespace
}  // namespace xet::testing::index_test
