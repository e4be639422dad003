// The Index contract, bucket part (bucket_index_contract_test.cc): deterministic files and
// batch operations, and the fixture with the helpers the bucket tests share (uploading files
// for a scope, applying batches, listing a bucket whole).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/bucket_records.h"
#include "store/index.h"
#include "store/index_contract.h"

namespace xet::testing {
namespace bucket_test {

using Kind = BucketOp::Kind;

inline Hash H(uint64_t tag, uint64_t n) {
  Hash h;
  const uint64_t w[4] = {tag * 0x9E3779B97F4A7C15ULL + n, n ^ 0x5A5A5A, tag + 3 * n + 1,
                         (n + 1) * 1024 + 1};
  std::memcpy(h.mutable_data(), w, 32);
  return h;
}

inline const Hash kXorb = H(1, 0);

// File n: 1 + n % 3 terms of 100 + n bytes each; odd files carry a SHA-256.
inline FileRecord MakeFile(uint64_t n) {
  FileRecord f;
  f.file_hash = H(3, n);
  for (uint64_t i = 0; i < 1 + n % 3; ++i) {
    f.terms.push_back({kXorb, 0, 1, static_cast<uint32_t>(100 + n)});
    f.size += 100 + n;
  }
  if (n % 2 == 1) f.sha256 = H(4, n);
  return f;
}
inline Hash F(uint64_t n) { return H(3, n); }
inline uint64_t SizeOf(uint64_t n) { return MakeFile(n).size; }

inline BucketOp Add(std::string path, uint64_t n, int64_t mtime = 0, std::string type = "") {
  BucketOp op;
  op.kind = Kind::kAddFile;
  op.path = std::move(path);
  op.file_hash = F(n);
  op.mtime_ms = mtime;
  op.content_type = std::move(type);
  return op;
}
inline BucketOp Del(std::string path) {
  BucketOp op;
  op.kind = Kind::kDeleteFile;
  op.path = std::move(path);
  return op;
}
inline BucketOp CopyFile(std::string path, uint64_t n, std::string source) {
  BucketOp op;
  op.kind = Kind::kCopyFile;
  op.path = std::move(path);
  op.file_hash = F(n);
  op.source_bucket = std::move(source);
  return op;
}
inline BucketOp CopyPrefix(std::string from, std::string to, std::string source = "") {
  BucketOp op;
  op.kind = Kind::kCopyPrefix;
  op.from = std::move(from);
  op.to = std::move(to);
  op.source_bucket = std::move(source);
  return op;
}
inline BucketOp Move(std::string from, std::string to) {
  BucketOp op;
  op.kind = Kind::kMovePrefix;
  op.from = std::move(from);
  op.to = std::move(to);
  return op;
}

}  // namespace bucket_test

// An Index with the bucket helpers; BucketIndexContract opens the parameter's backend, a
// backend's own bucket tests open theirs.
class BucketIndexFixture : public IndexFixture {
 protected:
  // Registers files `ns` (MakeFile) with a shard uploaded for `scope`.
  void Upload(const Scope& scope, std::vector<uint64_t> ns) {
    XorbRecord x;
    x.hash = bucket_test::kXorb;
    x.chunks.push_back({bucket_test::H(2, 0), 1000, 2000});
    x.object_size = 1100;
    ASSERT_TRUE(index_->PutXorb(x, scope).ok());
    ShardCommit c;
    c.shard_hash = bucket_test::H(6, next_shard_++);
    c.scope = scope;
    for (uint64_t n : ns) c.files.push_back(bucket_test::MakeFile(n));
    c.xorbs = {bucket_test::kXorb};
    auto r = index_->CommitShard(c);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  void Create(const std::string& ns, const std::string& name, int64_t now = 1000) {
    auto b = index_->CreateBucket(ns, name, true, now);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
  }

  BucketBatchResult Apply(const std::string& full, std::vector<BucketOp> ops, int64_t now = 2000) {
    const size_t slash = full.find('/');
    auto r = index_->ApplyBucketBatch(full.substr(0, slash), full.substr(slash + 1), ops, now);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    EXPECT_EQ(r->ops.size(), ops.size());
    return *r;
  }
  // Applies ops that must all succeed.
  void ApplyOk(const std::string& full, std::vector<BucketOp> ops, int64_t now = 2000) {
    BucketBatchResult r = Apply(full, std::move(ops), now);
    for (size_t i = 0; i < r.ops.size(); ++i)
      EXPECT_TRUE(r.ops[i].ok) << i << ": " << r.ops[i].error;
  }

  // Every entry of the bucket, path -> file hash, through recursive listing pages of 7.
  std::map<std::string, Hash> Entries(const std::string& ns, const std::string& name) {
    std::map<std::string, Hash> out;
    std::string cursor;
    while (true) {
      auto page = index_->ListBucketTree(ns, name, "", true, cursor, 7);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) break;
      for (const auto& item : page->items) {
        EXPECT_FALSE(item.is_directory);
        EXPECT_EQ(item.path, item.entry.path);
        out[item.entry.path] = item.entry.file_hash;
      }
      if (!page->next_cursor) break;
      cursor = *page->next_cursor;
    }
    return out;
  }

  bool Visible(uint64_t n, const Scope& scope) {
    const std::vector<Scope> scopes = {scope};
    auto v = index_->FileVisible(bucket_test::F(n), scopes);
    EXPECT_TRUE(v.ok());
    return v.ok() && *v;
  }

  // Asserts the stored totals equal the sum over the entries.
  void ExpectTotalsConsistent(const std::string& ns, const std::string& name) {
    auto b = index_->GetBucket(ns, name);
    ASSERT_TRUE(b.ok() && b->has_value());
    uint64_t files = 0, size = 0;
    std::string cursor;
    while (true) {
      auto page = index_->ListBucketTree(ns, name, "", true, cursor, 1000);
      ASSERT_TRUE(page.ok());
      for (const auto& item : page->items) {
        if (item.is_directory) continue;  // explicit directory entries count in no total
        files++;
        size += item.entry.size;
      }
      if (!page->next_cursor) break;
      cursor = *page->next_cursor;
    }
    EXPECT_EQ((*b)->total_files, files);
    EXPECT_EQ((*b)->total_size, size);
  }

  uint64_t next_shard_ = 1;
};

// The suite of bucket_index_contract_test.cc: buckets, batches, listings.
class BucketIndexContract : public BucketIndexFixture,
                            public ::testing::WithParamInterface<IndexBackend> {
 protected:
  void SetUp() override { Open(GetParam()); }
};

namespace bucket_test {
// One listing item as "d:path" / "D:path" (directory without / with an explicit entry) or
// "f:path".
inline std::string DescribeItem(const BucketTreeItem& item) {
  if (!item.is_directory) return "f:" + item.path;
  return (item.entry.is_directory ? "D:" : "d:") + item.path;
}

// The suite of bucket_posix_contract_test.cc: explicit directory entries, POSIX metadata,
// symbolic links, the generation counter. Starts with bucket ns/b holding files 1..4.
class BucketPosixContract : public BucketIndexContract {
 protected:
  // Every item of a listing, through pages of `page`.
  std::vector<BucketTreeItem> List(const std::string& prefix, bool recursive, size_t page = 1000) {
    std::vector<BucketTreeItem> out;
    std::string cursor;
    for (int guard = 0; guard < 1000; ++guard) {
      auto p = index_->ListBucketTree("ns", "b", prefix, recursive, cursor, page);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      if (!p.ok()) break;
      EXPECT_LE(p->items.size(), page);
      for (auto& item : p->items) out.push_back(item);
      if (!p->next_cursor) break;
      cursor = *p->next_cursor;
    }
    return out;
  }
  std::vector<std::string> Names(const std::string& prefix, bool recursive, size_t page = 1000) {
    std::vector<std::string> out;
    for (const auto& item : List(prefix, recursive, page)) out.push_back(DescribeItem(item));
    return out;
  }
  std::optional<BucketEntry> At(const std::string& path) {
    auto e = index_->GetBucketEntry("ns", "b", path);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? *e : std::nullopt;
  }
  uint64_t Generation() {
    auto b = index_->GetBucket("ns", "b");
    EXPECT_TRUE(b.ok() && b->has_value());
    return b.ok() && b->has_value() ? (*b)->generation : ~uint64_t{0};
  }
  // The one op of a batch, which must fail with an error containing `want`.
  void ExpectFails(BucketOp op, const std::string& want) {
    BucketBatchResult r = Apply("ns/b", {std::move(op)});
    ASSERT_EQ(r.ops.size(), 1u);
    EXPECT_FALSE(r.ops[0].ok);
    EXPECT_NE(r.ops[0].error.find(want), std::string::npos) << r.ops[0].error;
  }

  void SetUp() override {
    BucketIndexContract::SetUp();
    Create("ns", "b");
    Upload("ns/b", {1, 2, 3, 4});
  }
};

}  // namespace bucket_test

using bucket_test::BucketPosixContract;

}  // namespace xet::testing
