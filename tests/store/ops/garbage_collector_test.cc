// GarbageCollector (store/ops/garbage_collector.h) on real backends: SQLite and a real
// PostgreSQL (tests/support/postgres_test_server.h), with a real local object store. The
// uploads are played at the Index level the way the CAS service plays them (object, then
// PutXorb; dedup answer, then CommitShard naming the deduplicated xorb in a term).
#include "store/ops/garbage_collector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "format/shard_writer.h"
#include "store/index_contract.h"
#include "store/index_test_records.h"
#include "store/ops/ops_fixture.h"
#include "store/postgres/postgres_index_backend.h"
#include "store/sqlite/sqlite_index_backend.h"

namespace xet::testing::index_test {
namespace {

using Code = Status::Code;

class GcTest : public StoreOpsTest {
 protected:
  void SetUp() override {
    StoreOpsTest::SetUp();
    ASSERT_TRUE(index_->CreateBucket("ns", "b", true, 1).ok());
  }

  // Stores xorb n (object first, then the index row, as the CAS service does).
  XorbRecord StoreXorb(uint64_t n, const Scope& scope = "ns/b") {
    XorbRecord x = MakeXorb(n);
    const std::vector<uint8_t> bytes(x.object_size, static_cast<uint8_t>(n));
    EXPECT_TRUE(objects_->Put(XorbKey(x.hash), bytes).ok());
    auto put = index_->PutXorb(x, scope);
    EXPECT_TRUE(put.ok()) << put.status().ToString();
    return x;
  }

  // Registers file n over `xorbs` in its own shard (hash H(6, n)); the CAS section names
  // `new_xorbs` only, the rest are deduplicated.
  Status Register(uint64_t n, const std::vector<Hash>& xorbs, const std::vector<Hash>& new_xorbs,
                  const Scope& scope = "ns/b") {
    const FileRecord f = MakeFile(n, xorbs, xorbs.size());
    // The shard object (stored first, as the CAS service does) lists the file; gc reads it.
    Shard shard;
    FileInfo info;
    info.file_hash = f.file_hash;
    for (const FileTerm& t : f.terms) {
      info.terms.push_back({t.xorb_hash, 0, t.unpacked_bytes, t.chunk_start, t.chunk_end});
    }
    shard.files.push_back(info);
    auto bytes = SerializeShard(shard);
    if (!bytes.ok()) return bytes.status();
    XET_RETURN_IF_ERROR(objects_->Put(ShardKey(H(6, n)), *bytes).status());
    return index_->CommitShard({H(6, n), scope, {f}, new_xorbs}).status();
  }

  Status AddEntry(const std::string& path, const Hash& file) {
    BucketOp op;
    op.kind = BucketOp::Kind::kAddFile;
    op.path = path;
    op.file_hash = file;
    auto r = index_->ApplyBucketBatch("ns", "b", {op}, 1);
    if (!r.ok()) return r.status();
    return r->ops[0].ok ? Status::Ok() : Status::InvalidArgument(r->ops[0].error);
  }

  Status DeleteEntry(const std::string& path) {
    BucketOp op;
    op.kind = BucketOp::Kind::kDeleteFile;
    op.path = path;
    return index_->ApplyBucketBatch("ns", "b", {op}, 2).status();
  }

  GcReport RunGc(int64_t grace_ms, bool dry_run = false, std::function<Status()> hook = {}) {
    // Rows stamped in this millisecond are not older than a cutoff of now: let the clock move
    // past the test's last write.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    GcOptions options;
    options.grace_ms = grace_ms;
    options.dry_run = dry_run;
    options.batch = 7;  // several batches per phase
    options.after_mark = std::move(hook);
    GarbageCollector gc(*index_, *objects_, std::move(options));
    auto report = gc.Run();
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? *report : GcReport{};
  }

  bool XorbStored(const Hash& h) {
    auto in_index = index_->HasXorb(h);
    auto size = objects_->Size(XorbKey(h));
    EXPECT_TRUE(in_index.ok());
    return *in_index && size.ok();
  }
  bool XorbGone(const Hash& h) {
    return !*index_->HasXorb(h) && objects_->Size(XorbKey(h)).status().code() == Code::kNotFound;
  }

  // Every entry of bucket ns/b: its file is recorded and every xorb it references is in the
  // index and in the object store.
  void ExpectEveryEntryComplete() {
    auto page = index_->ListBucketTree("ns", "b", "", true, "", 100000);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const BucketTreeItem& item : page->items) {
      auto file = index_->GetFile(item.entry.file_hash);
      ASSERT_TRUE(file.ok() && file->has_value()) << item.path;
      for (const FileTerm& t : (*file)->terms) {
        EXPECT_TRUE(XorbStored(t.xorb_hash)) << item.path << " references a deleted xorb";
      }
    }
  }
};

TEST_P(GcTest, FreesExactlyTheUnreachableHalf) {
  std::vector<XorbRecord> xorbs;
  uint64_t odd_bytes = 0;
  for (uint64_t n = 0; n < 20; ++n) {
    xorbs.push_back(StoreXorb(n));
    ASSERT_TRUE(Register(n, {xorbs[n].hash}, {xorbs[n].hash}).ok());
    ASSERT_TRUE(AddEntry("f" + std::to_string(n), MakeFile(n, {xorbs[n].hash}).file_hash).ok());
    if (n % 2 == 1) odd_bytes += xorbs[n].object_size;
  }
  for (uint64_t n = 1; n < 20; n += 2) ASSERT_TRUE(DeleteEntry("f" + std::to_string(n)).ok());

  const GcReport dry = RunGc(0, /*dry_run=*/true);
  EXPECT_EQ(dry.files_freed, 10u);
  EXPECT_EQ(dry.xorbs_freed, 10u);
  EXPECT_EQ(dry.xorb_bytes_freed, odd_bytes);
  EXPECT_EQ(dry.shards_freed, 10u);
  for (const XorbRecord& x : xorbs) EXPECT_TRUE(XorbStored(x.hash));  // dry run: all kept

  const GcReport real = RunGc(0);
  EXPECT_EQ(real.files_scanned, 20u);
  EXPECT_EQ(real.files_freed, 10u);
  EXPECT_EQ(real.xorbs_scanned, 20u);
  EXPECT_EQ(real.xorbs_reachable, 10u);
  EXPECT_EQ(real.xorbs_freed, 10u);
  EXPECT_EQ(real.xorb_bytes_freed, odd_bytes);
  EXPECT_EQ(real.shards_freed, 10u);
  for (uint64_t n = 0; n < 20; ++n) {
    if (n % 2 == 0) {
      EXPECT_TRUE(XorbStored(xorbs[n].hash)) << n;
    } else {
      EXPECT_TRUE(XorbGone(xorbs[n].hash)) << n;
    }
  }
  for (uint64_t n = 0; n < 20; ++n) {
    const bool kept = objects_->Size(ShardKey(H(6, n))).ok();
    EXPECT_EQ(kept, n % 2 == 0) << n;
  }
  EXPECT_TRUE(index_->PendingDeletions(10, INT64_MAX)->empty());
  ExpectEveryEntryComplete();
  const GcReport again = RunGc(0);
  EXPECT_EQ(again.files_freed + again.xorbs_freed + again.shards_freed, 0u);
}

TEST_P(GcTest, GraceKeepsRecentUploadsAndUnreferencedFiles) {
  XorbRecord loose = StoreXorb(1);  // stored, never referenced
  XorbRecord uploaded = StoreXorb(2);
  ASSERT_TRUE(Register(2, {uploaded.hash}, {uploaded.hash}).ok());  // visible, in no bucket
  XorbRecord entry = StoreXorb(3);
  ASSERT_TRUE(Register(3, {entry.hash}, {entry.hash}).ok());
  ASSERT_TRUE(AddEntry("e", MakeFile(3, {entry.hash}).file_hash).ok());

  GcReport r = RunGc(3600'000);
  EXPECT_EQ(r.files_freed + r.xorbs_freed + r.shards_freed, 0u);
  EXPECT_TRUE(XorbStored(loose.hash));
  EXPECT_TRUE(XorbStored(uploaded.hash));
  EXPECT_TRUE(*index_->FileVisible(MakeFile(2, {uploaded.hash}).file_hash, S({"ns/b"})));

  r = RunGc(0);
  EXPECT_EQ(r.files_freed, 1u);
  EXPECT_EQ(r.xorbs_freed, 2u);
  EXPECT_TRUE(XorbGone(loose.hash));
  EXPECT_TRUE(XorbGone(uploaded.hash));
  EXPECT_TRUE(XorbStored(entry.hash));
  ExpectEveryEntryComplete();
}

// A retirement whose object deletion is still pending (another run's, or a crashed one's) is
// left to its owner for ten minutes: a run does not delete objects another run may still be
// working on.
TEST_P(GcTest, YoungPendingDeletionsAreLeftToTheirRun) {
  XorbRecord x = StoreXorb(1);
  const std::vector<Hash> one = {x.hash};
  ASSERT_EQ(index_->RetireXorbs(one, INT64_MAX, false)->size(), 1u);  // as a run that stopped
  const GcReport r = RunGc(0);
  EXPECT_EQ(r.pending_finished, 0u);
  EXPECT_TRUE(objects_->Size(XorbKey(x.hash)).ok());
  EXPECT_EQ(*index_->PendingDeletions(10, INT64_MAX), std::vector<std::string>{XorbKey(x.hash)});
}

// The race, made deterministic: an upload deduplicates against an unreachable old xorb and
// registers its file after gc's mark, before its sweep. The xorb must survive.
TEST_P(GcTest, UploadDedupingDuringGcKeepsItsXorb) {
  XorbRecord old = StoreXorb(1);  // unreachable and older than any grace
  XorbRecord fresh = StoreXorb(2);
  bool hook_ran = false;
  const GcReport r = RunGc(0, false, [&]() -> Status {
    hook_ran = true;
    auto dedup = index_->FindXorbsWithChunk(old.chunks[0].hash, S({"ns/b"}), 4);
    if (!dedup.ok()) return dedup.status();
    EXPECT_EQ(*dedup, std::vector<Hash>{old.hash});
    XET_RETURN_IF_ERROR(Register(9, {fresh.hash, old.hash}, {fresh.hash}));
    return AddEntry("deduped", MakeFile(9, {fresh.hash, old.hash}).file_hash);
  });
  ASSERT_TRUE(hook_ran);
  EXPECT_EQ(r.xorbs_freed, 0u);
  EXPECT_TRUE(XorbStored(old.hash));
  ExpectEveryEntryComplete();
  // Once that entry is gone, a later run frees both.
  ASSERT_TRUE(DeleteEntry("deduped").ok());
  EXPECT_EQ(RunGc(0).xorbs_freed, 2u);
}

// The other order: gc retired the xorb before the upload registered its file. The upload is
// refused with a clear error and nothing references the deleted xorb.
TEST_P(GcTest, UploadRegisteringAfterRetirementIsRefused) {
  XorbRecord old = StoreXorb(1);
  auto dedup = index_->FindXorbsWithChunk(old.chunks[0].hash, S({"ns/b"}), 4);
  ASSERT_TRUE(dedup.ok());
  ASSERT_EQ(*dedup, std::vector<Hash>{old.hash});
  EXPECT_EQ(RunGc(0).xorbs_freed, 1u);
  XorbRecord fresh = StoreXorb(2);
  Status st = Register(9, {fresh.hash, old.hash}, {fresh.hash});
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("xorb " + old.hash.ToHex() + " is not in the index"),
            std::string::npos)
      << st.ToString();
  EXPECT_FALSE(AddEntry("deduped", MakeFile(9, {fresh.hash, old.hash}).file_hash).ok());
  ExpectEveryEntryComplete();
}

// Uploaders deduplicating against old xorbs and removing entries, while gc runs in a loop
// with no grace: no entry may ever reference a deleted xorb. Refusals are allowed (that is
// what an upload racing a retirement gets); dangling references are not.
TEST_P(GcTest, ConcurrentUploadsNeverReferenceDeletedXorbs) {
  constexpr uint64_t kBase = 100;
  for (uint64_t n = 0; n < 40; ++n) StoreXorb(n);  // old, unreachable dedup targets
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> next{kBase}, committed{0}, refused{0};
  std::atomic<int> gc_runs{0};
  auto uploader = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    while (!stop.load()) {
      const uint64_t n = next.fetch_add(1);
      const XorbRecord target = MakeXorb(rng() % 40);
      auto dedup = index_->FindXorbsWithChunk(target.chunks[0].hash, S({"ns/b"}), 1);
      ASSERT_TRUE(dedup.ok()) << dedup.status().ToString();
      std::vector<Hash> terms;
      XorbRecord own = MakeXorb(n);
      const std::vector<uint8_t> bytes(own.object_size, 1);
      ASSERT_TRUE(objects_->Put(XorbKey(own.hash), bytes).ok());
      auto put = index_->PutXorb(own, "ns/b");
      if (!put.ok()) {
        ASSERT_EQ(put.status().code(), Code::kUnavailable) << put.status().ToString();
        continue;
      }
      terms.push_back(own.hash);
      if (!dedup->empty()) terms.push_back((*dedup)[0]);
      Status st = Register(n, terms, {own.hash});
      if (!st.ok()) {
        ASSERT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
        ASSERT_NE(st.message().find("is not in the index"), std::string::npos) << st.ToString();
        ++refused;
        continue;
      }
      const std::string path = "u" + std::to_string(n);
      Status add = AddEntry(path, MakeFile(n, terms).file_hash);
      if (!add.ok()) {
        // gc collected the file between registration and batch: only possible with no grace.
        ASSERT_NE(add.message().find("not found"), std::string::npos) << add.ToString();
        ++refused;
        continue;
      }
      ++committed;
      if (rng() % 3 == 0) {
        ASSERT_TRUE(DeleteEntry(path).ok());
      }
      // Re-upload an old file (its own shard again): stamps and re-registers it.
      if (rng() % 5 == 0) (void)Register(n, terms, {own.hash});
    }
  };
  std::thread gc_thread([&] {
    while (!stop.load()) {
      RunGc(0);
      ++gc_runs;
    }
  });
  std::vector<std::thread> uploaders;
  for (uint64_t i = 0; i < 3; ++i) uploaders.emplace_back(uploader, i + 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((gc_runs.load() < 15 || committed.load() < 60) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop = true;
  for (auto& t : uploaders) t.join();
  gc_thread.join();
  ExpectEveryEntryComplete();
  RunGc(0);  // and after one more run with nothing in flight
  ExpectEveryEntryComplete();
  EXPECT_GE(gc_runs.load(), 15);
  EXPECT_GE(committed.load(), 60u);
  RecordProperty("committed", static_cast<int>(committed.load()));
  RecordProperty("refused", static_cast<int>(refused.load()));
}

INSTANTIATE_TEST_SUITE_P(Sqlite, GcTest, ::testing::Values(SqliteIndexBackend()), IndexBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, GcTest, ::testing::Values(PostgresIndexBackend()),
                         IndexBackendName);

}  // namespace
}  // namespace xet::testing::index_test
