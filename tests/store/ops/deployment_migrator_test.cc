// DeploymentMigrator (store/ops/deployment_migrator.h) between real backends: SQLite + a
// local directory to a real PostgreSQL + a real S3 server (s3rver), PostgreSQL back to
// SQLite, and SQLite to SQLite. The destination is compared with the source through the
// Index's own exports, listings and the objects' bytes, so what is checked is what the
// source holds, not values written into the test.
#include "store/ops/deployment_migrator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "format/sha256.h"
#include "store/index_contract.h"
#include "store/index_support.h"
#include "store/local/local_object_store.h"
#include "store/postgres/postgres_index_backend.h"
#include "store/s3/s3_object_store.h"
#include "store/s3/s3_test_options.h"
#include "store/sqlite/sqlite_index_backend.h"
#include "support/s3_test_server.h"
#include "support/temp_dir.h"
#include "support/xet_fixtures.h"

namespace xet::testing {
namespace {

struct MigrationCase {
  std::string name;
  IndexBackend from;
  IndexBackend to;
  bool to_s3 = false;
};

std::string CaseName(const ::testing::TestParamInfo<MigrationCase>& info) {
  return info.param.name;
}

PosixMetadata Posix(uint32_t mode, std::string target = {}) {
  PosixMetadata p;
  p.mode = mode;
  p.uid = 1000;
  p.gid = 100;
  p.target = std::move(target);
  return p;
}

// Everything an index holds, read through its exports and listings (row ids left out: they
// are each index's own).
struct IndexImage {
  std::map<Hash, Index::ExportedXorb> xorbs;
  std::map<Hash, Index::ExportedFile> files;
  std::map<Hash, Index::ExportedShard> shards;
  std::vector<BucketRecord> buckets;
  std::map<std::string, std::vector<BucketTreeItem>> entries;
  std::vector<TokenRecord> tokens;
};

IndexImage ImageOf(Index& index) {
  IndexImage image;
  for (int64_t after = 0;;) {
    auto page = index.ExportXorbs(after, 7);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok() || page->empty()) break;
    after = page->back().row_id;
    for (auto& x : *page) {
      x.row_id = 0;
      image.xorbs[x.record.hash] = x;
    }
  }
  for (int64_t after = 0;;) {
    auto page = index.ExportFiles(after, 3);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok() || page->empty()) break;
    after = page->back().row_id;
    for (auto& f : *page) {
      f.row_id = 0;
      image.files[f.record.file_hash] = f;
    }
  }
  for (Hash after;;) {
    auto page = index.ExportShards(after, 2);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok() || page->empty()) break;
    after = page->back().hash;
    for (auto& s : *page) image.shards[s.hash] = s;
  }
  auto buckets = index.ListBuckets("", "", "", 1000);
  EXPECT_TRUE(buckets.ok()) << buckets.status().ToString();
  if (buckets.ok()) image.buckets = *buckets;
  for (BucketRecord& b : image.buckets) {
    std::vector<BucketTreeItem>& items = image.entries[b.FullName()];
    std::string cursor;
    while (true) {
      auto page = index.ListBucketTree(b.ns, b.name, "", true, cursor, 2);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) break;
      for (auto& item : page->items) items.push_back(item);
      if (!page->next_cursor) break;
      cursor = *page->next_cursor;
    }
    b.generation = 0;  // compared apart: the destination's only has to be at least as high
  }
  auto tokens = index.ListTokens();
  EXPECT_TRUE(tokens.ok()) << tokens.status().ToString();
  if (tokens.ok()) image.tokens = *tokens;
  return image;
}

bool SameXorb(const Index::ExportedXorb& a, const Index::ExportedXorb& b) {
  return a.record == b.record && a.seen_at_ms == b.seen_at_ms && a.scopes == b.scopes;
}
bool SameFile(const Index::ExportedFile& a, const Index::ExportedFile& b) {
  return a.record == b.record && a.seen_at_ms == b.seen_at_ms && a.scopes == b.scopes;
}
bool SameShard(const Index::ExportedShard& a, const Index::ExportedShard& b) {
  return a.hash == b.hash && a.scope == b.scope && a.created_at == b.created_at &&
         a.seen_at_ms == b.seen_at_ms;
}

template <typename Map, typename Eq>
void ExpectSameRows(const Map& want, const Map& got, Eq eq, const char* what) {
  EXPECT_EQ(want.size(), got.size()) << what;
  for (const auto& [key, row] : want) {
    auto it = got.find(key);
    if (it == got.end()) {
      ADD_FAILURE() << what << " " << key.ToHex() << " missing";
    } else {
      EXPECT_TRUE(eq(row, it->second)) << what << " " << key.ToHex() << " differs";
    }
  }
}

bool SameItems(const std::vector<BucketTreeItem>& a, const std::vector<BucketTreeItem>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].path != b[i].path || a[i].is_directory != b[i].is_directory ||
        !(a[i].entry == b[i].entry)) {
      return false;
    }
  }
  return true;
}

class MigratorTest : public ::testing::TestWithParam<MigrationCase> {
 protected:
  void SetUp() override {
    auto from = GetParam().from.open(from_dir_.path());
    ASSERT_TRUE(from.ok()) << from.status().ToString();
    from_index_ = std::move(from).value();
    auto to = GetParam().to.open(to_dir_.path());
    ASSERT_TRUE(to.ok()) << to.status().ToString();
    to_index_ = std::move(to).value();
    auto from_objects = LocalObjectStore::Open(from_dir_.path() + "/objects");
    ASSERT_TRUE(from_objects.ok());
    from_objects_ = std::move(from_objects).value();
    if (GetParam().to_s3) {
      S3TestServer& server = S3TestServer::Shared();
      ASSERT_TRUE(server.started());
      auto s3 = OpenS3ObjectStore(S3TestOptions(server, S3TestPrefix(to_dir_.path())));
      ASSERT_TRUE(s3.ok()) << s3.status().ToString();
      to_objects_ = std::move(s3).value();
    } else {
      auto local = LocalObjectStore::Open(to_dir_.path() + "/objects");
      ASSERT_TRUE(local.ok());
      to_objects_ = std::move(local).value();
    }
  }

  // Uploads `size` random bytes (seed `seed`) as the CAS service stores them: xorb objects and
  // rows, the shard object, then the shard's registration. Returns the file's hash.
  Hash Upload(size_t size, uint64_t seed, const Scope& scope = "ns/b") {
    std::vector<uint8_t> data(size);
    std::mt19937_64 rng(seed);
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    UploadArtifacts up = PrepareUpload(data, CompressionPolicy::kPredict, 3);
    std::vector<Hash> xorbs;
    for (const SerializedXorb& x : up.xorbs) {
      EXPECT_TRUE(from_objects_->Put(XorbKey(x.hash), x.bytes).ok());
      EXPECT_TRUE(from_index_->PutXorb(XorbRecordOf(x.hash, x.table, x.bytes.size()), scope).ok());
      xorbs.push_back(x.hash);
    }
    const std::vector<uint8_t> shard(up.shard_bytes.begin(), up.shard_bytes.end());
    const Hash shard_hash = Hash::FromArray(Sha256Of(shard));
    EXPECT_TRUE(from_objects_->Put(ShardKey(shard_hash), shard).ok());
    FileRecord f;
    f.file_hash = up.file_hash;
    f.sha256 = Hash::FromArray(Sha256Of(data));
    for (const auto& t : up.shard.files[0].terms) {
      f.terms.push_back(
          {t.cas_hash, t.chunk_index_start, t.chunk_index_end, t.unpacked_segment_bytes});
      f.size += t.unpacked_segment_bytes;
    }
    EXPECT_TRUE(from_index_->CommitShard({shard_hash, scope, {f}, xorbs}).ok());
    uploaded_objects_ += up.xorbs.size() + 1;
    return up.file_hash;
  }

  void Apply(std::vector<BucketOp> ops, const std::string& bucket = "b") {
    auto r = from_index_->ApplyBucketBatch("ns", bucket, ops, ++clock_ms_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (const BucketOpResult& op : r->ops) EXPECT_TRUE(op.ok) << op.error;
  }

  static BucketOp AddFile(const std::string& path, const Hash& h,
                          std::optional<PosixMetadata> posix = std::nullopt) {
    BucketOp op;
    op.kind = BucketOp::Kind::kAddFile;
    op.path = path;
    op.file_hash = h;
    op.mtime_ms = 1'700'000'000'000;
    op.content_type = "application/octet-stream";
    op.posix = std::move(posix);
    return op;
  }

  // A bucket of files, a directory entry, a symbolic link, and a token.
  void Populate() {
    ASSERT_TRUE(from_index_->CreateBucket("ns", "b", true, 1'000).ok());
    ASSERT_TRUE(from_index_->CreateBucket("ns", "public", false, 2'000).ok());
    file_a_ = Upload(300'000, 1);
    file_b_ = Upload(200'000, 2);
    BucketOp dir;
    dir.kind = BucketOp::Kind::kAddDirectory;
    dir.path = "empty-dir";
    dir.posix = Posix(0040755);
    // Two batches: entries with upload times of their own, before the bucket's last change.
    Apply({AddFile("a/x.bin", file_a_, Posix(0100644)), AddFile("y.bin", file_b_)});
    Apply({AddFile("q", file_a_), dir, AddFile("link", Hash(), Posix(0120777, "a/x.bin"))});
    const Hash p = Upload(100'000, 3, "ns/public");
    Apply({AddFile("p.bin", p)}, "public");
    TokenRecord t;
    t.id = "tok1";
    t.name = "ci";
    t.secret_hash = Hash::FromArray(Sha256Of(std::vector<uint8_t>{1, 2, 3}));
    t.permission = Permission::kWrite;
    t.scopes = {"ns/b"};
    t.created_at = 1'700'000'000;
    ASSERT_TRUE(from_index_->PutToken(t).ok());
  }

  Result<MigrateReport> Migrate(MigrateOptions options = {}) {
    DeploymentMigrator m(*from_index_, *from_objects_, *to_index_, *to_objects_,
                         std::move(options));
    return m.Run(checkpoint_);
  }

  // The destination holds what the source holds: rows, entries, tokens and object bytes.
  void ExpectSameDeployment() {
    IndexImage want = ImageOf(*from_index_);
    IndexImage got = ImageOf(*to_index_);
    ExpectSameRows(want.xorbs, got.xorbs, SameXorb, "xorb");
    ExpectSameRows(want.files, got.files, SameFile, "file");
    ExpectSameRows(want.shards, got.shards, SameShard, "shard");
    EXPECT_EQ(want.buckets, got.buckets);
    for (const auto& [name, items] : want.entries) {
      EXPECT_TRUE(SameItems(items, got.entries[name])) << name;
    }
    EXPECT_EQ(want.tokens, got.tokens);
    auto source_buckets = from_index_->ListBuckets("", "", "", 100);
    ASSERT_TRUE(source_buckets.ok());
    for (const BucketRecord& b : *source_buckets) {
      auto there = to_index_->GetBucket(b.ns, b.name);
      ASSERT_TRUE(there.ok() && there->has_value());
      EXPECT_GE((*there)->generation, b.generation);
    }
    size_t objects = 0;
    ASSERT_TRUE(from_objects_
                    ->List("",
                           [&](std::string_view key, uint64_t) -> Status {
                             objects++;
                             auto a = from_objects_->Get(key);
                             auto b = to_objects_->Get(key);
                             EXPECT_TRUE(b.ok()) << key << ": " << b.status().ToString();
                             if (a.ok() && b.ok()) {
                               EXPECT_TRUE(*a == *b) << key;
                             }
                             return Status::Ok();
                           })
                    .ok());
    EXPECT_EQ(objects, uploaded_objects_);
  }

  TempDir from_dir_{"xet-migrate-from"};
  TempDir to_dir_{"xet-migrate-to"};
  std::unique_ptr<Index> from_index_, to_index_;
  std::unique_ptr<ObjectStore> from_objects_, to_objects_;
  MigrateCheckpoint checkpoint_;
  size_t uploaded_objects_ = 0;
  int64_t clock_ms_ = 1'800'000'000'000;
  Hash file_a_, file_b_;
};

TEST_P(MigratorTest, CopiesEveryRowEntryTokenAndObject) {
  Populate();
  auto r = Migrate();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectSameDeployment();
  EXPECT_EQ(r->objects_copied, uploaded_objects_);
  EXPECT_EQ(r->objects_present, 0u);
  EXPECT_EQ(r->buckets, 2u);
  EXPECT_EQ(r->tokens, 1u);
  // The copy serves what the source does: records, visibility and the dedup index.
  auto file = to_index_->GetFile(file_a_);
  ASSERT_TRUE(file.ok() && file->has_value());
  EXPECT_TRUE(*to_index_->FileVisible(file_a_, std::vector<Scope>{"ns/b"}));
  EXPECT_FALSE(*to_index_->FileVisible(file_a_, std::vector<Scope>{"ns/public"}));
  const Hash first_xorb = (*file)->terms[0].xorb_hash;
  auto xorb = to_index_->GetXorb(first_xorb);
  ASSERT_TRUE(xorb.ok() && xorb->has_value());
  auto dedup =
      to_index_->FindXorbsWithChunk((*xorb)->chunks[0].hash, std::vector<Scope>{"ns/b"}, 10);
  ASSERT_TRUE(dedup.ok());
  EXPECT_NE(std::find(dedup->begin(), dedup->end(), first_xorb), dedup->end());
  // Run again: nothing new is copied.
  auto again = Migrate();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->xorbs, 0u);
  EXPECT_EQ(again->files, 0u);
  EXPECT_EQ(again->objects_copied, 0u);
  EXPECT_EQ(again->objects_present, 0u);  // not even looked up: the rows say they are there
  EXPECT_EQ(again->shards, r->shards);
  EXPECT_EQ(again->entries_written + again->entries_removed, 0u);
  ExpectSameDeployment();
}

TEST_P(MigratorTest, ASecondRunCopiesWhatChangedMeanwhile) {
  Populate();
  ASSERT_TRUE(Migrate().ok());
  // Writes after the first run: a new upload, a deletion, new metadata, and a file replaced
  // by a directory entry at the same path.
  const size_t objects_before = uploaded_objects_;
  const Hash c = Upload(150'000, 4);
  BucketOp del;
  del.kind = BucketOp::Kind::kDeleteFile;
  del.path = "y.bin";
  BucketOp meta;
  meta.kind = BucketOp::Kind::kSetMetadata;
  meta.path = "a/x.bin";
  meta.posix = Posix(0100600);
  BucketOp del_q = del;
  del_q.path = "q";
  BucketOp dir_q;
  dir_q.kind = BucketOp::Kind::kAddDirectory;
  dir_q.path = "q";
  dir_q.posix = Posix(0040700);
  Apply({AddFile("z.bin", c), del, meta, del_q, dir_q});
  auto r = Migrate();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectSameDeployment();
  EXPECT_EQ(r->objects_copied, uploaded_objects_ - objects_before);
  EXPECT_EQ(r->files, 1u);
  EXPECT_GE(r->entries_removed, 2u);  // y.bin and the file at q
  // file_b_ lost its last entry in ns/b: the copy drops that visibility too.
  EXPECT_FALSE(*to_index_->FileVisible(file_b_, std::vector<Scope>{"ns/b"}));
}

TEST_P(MigratorTest, AnInterruptedRunResumesWithoutCopyingTwice) {
  Populate();
  MigrateOptions failing;
  failing.page = 1;
  failing.file_page = 1;
  int saves = 0;
  failing.save_checkpoint = [&](const MigrateCheckpoint&) {
    return ++saves == 3 ? Status::IoError("disk gone") : Status::Ok();
  };
  auto first = Migrate(failing);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), Status::Code::kIoError);
  EXPECT_GT(checkpoint_.xorbs_after, 0);
  MigrateOptions small;
  small.page = 2;
  small.file_page = 1;
  auto second = Migrate(small);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ExpectSameDeployment();
  // The three xorbs the first run imported (and their objects) were not copied again.
  EXPECT_EQ(second->objects_copied, uploaded_objects_ - 3);
}

TEST_P(MigratorTest, ASourceObjectOfTheWrongSizeStopsTheRunAndIsNotRegistered) {
  Populate();
  auto page = from_index_->ExportXorbs(0, 1);
  ASSERT_TRUE(page.ok() && page->size() == 1);
  const Hash victim = (*page)[0].record.hash;
  const std::string key = XorbKey(victim);
  auto bytes = from_objects_->Get(key);
  ASSERT_TRUE(bytes.ok());
  bytes->resize(bytes->size() / 2);
  ASSERT_TRUE(from_objects_->Delete(key).ok());
  ASSERT_TRUE(from_objects_->Put(key, *bytes).ok());
  auto r = Migrate();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_NE(r.status().message().find(key), std::string::npos) << r.status().ToString();
  EXPECT_FALSE(*to_index_->HasXorb(victim));
  EXPECT_EQ(to_objects_->Size(key).status().code(), Status::Code::kNotFound);
}

TEST_P(MigratorTest, DestinationOnlyBucketsAreKeptUnlessAskedToDelete) {
  Populate();
  ASSERT_TRUE(to_index_->CreateBucket("other", "extra", true, 5).ok());
  auto r = Migrate();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->extra_buckets, 1u);
  EXPECT_TRUE(to_index_->GetBucket("other", "extra")->has_value());
  MigrateOptions del;
  del.delete_extra_buckets = true;
  r = Migrate(del);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->extra_buckets, 1u);
  EXPECT_FALSE(to_index_->GetBucket("other", "extra")->has_value());
  ExpectSameDeployment();
}

INSTANTIATE_TEST_SUITE_P(
    Backends, MigratorTest,
    ::testing::Values(
        MigrationCase{"SqliteDirToPostgresS3", SqliteIndexBackend(), PostgresIndexBackend(), true},
        MigrationCase{"PostgresToSqliteDir", PostgresIndexBackend(), SqliteIndexBackend(), false},
        MigrationCase{"SqliteToSqlite", SqliteIndexBackend(), SqliteIndexBackend(), false}),
    CaseName);

}  // namespace
}  // namespace xet::testing
