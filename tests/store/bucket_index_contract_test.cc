// The Index contract, bucket part (index.h, bucket_records.h): bucket CRUD and rename,
// batches (every op kind, per-op failure isolation, durability across reopen, totals,
// last-reference visibility removal), prefix copy/move, tree listings against an
// independently computed expectation, cursors, and concurrent batches on the same paths.
// Every Index backend runs it (see index_contract.h).
#include "store/bucket_index_contract.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace xet::testing::bucket_test {
namespace {

using Code = Status::Code;

// --- buckets ---

TEST_P(BucketIndexContract, CreateGetAndAlreadyExists) {
  auto b = index_->CreateBucket("ns", "b1", false, 1234);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->FullName(), "ns/b1");
  EXPECT_FALSE(b->is_private);
  EXPECT_EQ(b->created_at_ms, 1234);
  EXPECT_EQ(b->updated_at_ms, 1234);
  EXPECT_EQ(b->total_files, 0u);
  auto got = index_->GetBucket("ns", "b1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, *b);
  EXPECT_EQ(index_->CreateBucket("ns", "b1", true, 5).status().code(), Code::kAlreadyExists);
  EXPECT_FALSE(index_->GetBucket("ns", "nope")->has_value());
  EXPECT_FALSE(index_->GetBucket("other", "b1")->has_value());
  ASSERT_TRUE(index_->CreateBucket("other", "b1", true, 5).ok());  // same name, other namespace
  EXPECT_TRUE((**index_->GetBucket("other", "b1")).is_private);
}

TEST_P(BucketIndexContract, ListBucketsOrderFilterSearchAndPagination) {
  for (const char* full : {"b/zeta", "a/Models", "a/data", "c/x", "a/my-models", "b/alpha"}) {
    const std::string s(full);
    Create(s.substr(0, s.find('/')), s.substr(s.find('/') + 1));
  }
  auto names = [](const std::vector<BucketRecord>& v) {
    std::vector<std::string> out;
    for (const auto& b : v) out.push_back(b.FullName());
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(*index_->ListBuckets("", "", "", 100)),
            (V{"a/Models", "a/data", "a/my-models", "b/alpha", "b/zeta", "c/x"}));
  EXPECT_EQ(names(*index_->ListBuckets("a", "", "", 100)),
            (V{"a/Models", "a/data", "a/my-models"}));
  EXPECT_EQ(names(*index_->ListBuckets("", "model", "", 100)), (V{"a/Models", "a/my-models"}));
  EXPECT_EQ(names(*index_->ListBuckets("b", "model", "", 100)), V{});
  EXPECT_TRUE(index_->ListBuckets("", "", "", 0)->empty());
  // Pages of 2 walk everything once, in order.
  V all;
  std::string after;
  while (true) {
    auto page = index_->ListBuckets("", "", after, 2);
    ASSERT_TRUE(page.ok());
    if (page->empty()) break;
    for (const auto& n : names(*page)) all.push_back(n);
    after = page->back().FullName();
  }
  EXPECT_EQ(all, names(*index_->ListBuckets("", "", "", 100)));
  EXPECT_EQ(names(*index_->ListBuckets("", "", "a/data", 2)), (V{"a/my-models", "b/alpha"}));
  EXPECT_EQ(names(*index_->ListBuckets("", "", "a", 2)), (V{"b/alpha", "b/zeta"}));
}

TEST_P(BucketIndexContract, DeleteBucketRemovesEntriesAndVisibility) {
  Create("ns", "a");
  Create("ns", "b");
  Upload("ns/a", {1, 2});
  Upload("ns/b", {1});
  ApplyOk("ns/a", {Add("x", 1), Add("y", 2)});
  ApplyOk("ns/b", {Add("x", 1)});
  const std::vector<Scope> scope_a = {"ns/a"};
  EXPECT_TRUE(*index_->XorbVisible(kXorb, scope_a));
  EXPECT_EQ(index_->DeleteBucket("ns", "zz").code(), Code::kNotFound);
  ASSERT_TRUE(index_->DeleteBucket("ns", "a").ok());
  EXPECT_FALSE(index_->GetBucket("ns", "a")->has_value());
  EXPECT_FALSE(Visible(1, "ns/a"));
  EXPECT_FALSE(Visible(2, "ns/a"));
  EXPECT_FALSE(*index_->XorbVisible(kXorb, scope_a));
  EXPECT_TRUE(Visible(1, "ns/b"));  // another bucket keeps its own visibility
  EXPECT_EQ(Entries("ns", "b").size(), 1u);
  EXPECT_EQ(index_->DeleteBucket("ns", "a").code(), Code::kNotFound);
  // A bucket re-created under the name starts empty and sees nothing.
  Create("ns", "a");
  EXPECT_TRUE(Entries("ns", "a").empty());
  BucketBatchResult r = Apply("ns/a", {Add("x", 1)});
  EXPECT_FALSE(r.ops[0].ok);
}

TEST_P(BucketIndexContract, MoveBucketCarriesEntriesAndVisibility) {
  Create("ns", "old");
  Create("ns", "taken");
  Upload("ns/old", {1, 2, 3});
  ApplyOk("ns/old", {Add("d/x", 1), Add("y", 2)});
  // Rows of the new scope name that already exist (a shard uploaded for it before the move).
  Upload("ns/new", {2});
  EXPECT_EQ(index_->MoveBucket("ns", "nope", "ns", "new", 5).code(), Code::kNotFound);
  EXPECT_EQ(index_->MoveBucket("ns", "old", "ns", "taken", 5).code(), Code::kAlreadyExists);
  ASSERT_TRUE(index_->MoveBucket("ns", "old", "ns", "new", 3000).ok());
  EXPECT_FALSE(index_->GetBucket("ns", "old")->has_value());
  auto b = index_->GetBucket("ns", "new");
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ((*b)->updated_at_ms, 3000);
  EXPECT_EQ((*b)->total_files, 2u);
  EXPECT_EQ(Entries("ns", "new"), (std::map<std::string, Hash>{{"d/x", F(1)}, {"y", F(2)}}));
  for (uint64_t n : {1, 2, 3}) {
    EXPECT_TRUE(Visible(n, "ns/new")) << n;
    EXPECT_FALSE(Visible(n, "ns/old")) << n;
  }
  const std::vector<Scope> new_scope = {"ns/new"}, old_scope = {"ns/old"};
  EXPECT_TRUE(*index_->XorbVisible(kXorb, new_scope));
  EXPECT_FALSE(*index_->XorbVisible(kXorb, old_scope));
  // The renamed bucket works as before; the old name is free.
  ApplyOk("ns/new", {Add("z", 3)});
  Create("ns", "old");
  EXPECT_TRUE(Entries("ns", "old").empty());
  // Across namespaces.
  ASSERT_TRUE(index_->MoveBucket("ns", "new", "other", "b", 4000).ok());
  EXPECT_EQ(Entries("other", "b").size(), 3u);
  EXPECT_TRUE(Visible(3, "other/b"));
}

// --- batches ---

TEST_P(BucketIndexContract, AddFileRecordsEntryFromTheFileRecord) {
  Create("ns", "b");
  Upload("ns/b", {1, 2});
  BucketBatchResult r = Apply("ns/b", {Add("dir/one.bin", 1, 777, "application/x")}, 5000);
  ASSERT_TRUE(r.ops[0].ok);
  EXPECT_EQ(r.ops[0].entries_changed, 1u);
  EXPECT_EQ(r.succeeded, 1u);
  auto e = index_->GetBucketEntry("ns", "b", "dir/one.bin");
  ASSERT_TRUE(e.ok() && e->has_value());
  EXPECT_EQ((*e)->path, "dir/one.bin");
  EXPECT_EQ((*e)->file_hash, F(1));
  EXPECT_EQ((*e)->size, SizeOf(1));
  EXPECT_EQ((*e)->sha256, MakeFile(1).sha256);
  EXPECT_EQ((*e)->mtime_ms, 777);
  EXPECT_EQ((*e)->uploaded_at_ms, 5000);
  EXPECT_EQ((*e)->content_type, "application/x");
  ApplyOk("ns/b", {Add("two", 2)});
  EXPECT_FALSE((**index_->GetBucketEntry("ns", "b", "two")).sha256.has_value());
  EXPECT_FALSE(index_->GetBucketEntry("ns", "b", "dir")->has_value());
  auto bucket = **index_->GetBucket("ns", "b");
  EXPECT_EQ(bucket.total_files, 2u);
  EXPECT_EQ(bucket.total_size, SizeOf(1) + SizeOf(2));
  EXPECT_EQ(bucket.updated_at_ms, 2000);
}

TEST_P(BucketIndexContract, AddFileRejectsUnknownAndInvisibleFiles) {
  Create("ns", "a");
  Create("ns", "b");
  Upload("ns/a", {1});
  BucketBatchResult r = Apply("ns/b", {Add("x", 1), Add("y", 99)});
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_FALSE(r.ops[0].ok);  // registered, but only for ns/a
  EXPECT_EQ(r.ops[0].error, "file " + F(1).ToHex() + " not found (upload its shard first)");
  EXPECT_FALSE(r.ops[1].ok);
  EXPECT_EQ(r.ops[1].error, "file " + F(99).ToHex() + " not found (upload its shard first)");
  EXPECT_EQ(r.succeeded, 0u);
  EXPECT_TRUE(Entries("ns", "b").empty());
  EXPECT_EQ((**index_->GetBucket("ns", "b")).updated_at_ms, 1000);  // nothing changed
}

TEST_P(BucketIndexContract, MissingBucketIsNotFoundEverywhere) {
  EXPECT_EQ(index_->ApplyBucketBatch("ns", "none", {Del("x")}, 1).status().code(), Code::kNotFound);
  EXPECT_EQ(index_->GetBucketEntry("ns", "none", "x").status().code(), Code::kNotFound);
  const std::vector<std::string> paths = {"x"};
  EXPECT_EQ(index_->GetBucketEntries("ns", "none", paths).status().code(), Code::kNotFound);
  EXPECT_EQ(index_->ListBucketTree("ns", "none", "", true, "", 10).status().code(),
            Code::kNotFound);
}

TEST_P(BucketIndexContract, DeleteIsIdempotentAndTotalsFollow) {
  Create("ns", "b");
  Upload("ns/b", {1, 2, 3});
  ApplyOk("ns/b", {Add("a", 1), Add("b", 2), Add("c", 3)});
  BucketBatchResult r = Apply("ns/b", {Del("b"), Del("b"), Del("missing")});
  EXPECT_EQ(r.succeeded, 3u);
  EXPECT_EQ(r.ops[0].entries_changed, 1u);
  EXPECT_EQ(r.ops[1].entries_changed, 0u);
  EXPECT_EQ(r.ops[2].entries_changed, 0u);
  auto b = **index_->GetBucket("ns", "b");
  EXPECT_EQ(b.total_files, 2u);
  EXPECT_EQ(b.total_size, SizeOf(1) + SizeOf(3));
  // Overwrite: the count stays, the size follows the new file.
  ApplyOk("ns/b", {Add("a", 3)});
  b = **index_->GetBucket("ns", "b");
  EXPECT_EQ(b.total_files, 2u);
  EXPECT_EQ(b.total_size, 2 * SizeOf(3));
  ExpectTotalsConsistent("ns", "b");
}

TEST_P(BucketIndexContract, LastReferenceRemovalTakesVisibility) {
  Create("ns", "b");
  Upload("ns/b", {1, 2, 3});
  ApplyOk("ns/b", {Add("p1", 1), Add("p2", 1), Add("q", 2)});
  ApplyOk("ns/b", {Del("p1")});
  EXPECT_TRUE(Visible(1, "ns/b"));  // p2 still points at it
  ApplyOk("ns/b", {Del("p2")});
  EXPECT_FALSE(Visible(1, "ns/b"));  // last entry gone
  BucketBatchResult r = Apply("ns/b", {Add("again", 1)});
  EXPECT_FALSE(r.ops[0].ok);  // must be uploaded again
  // Overwriting the last entry also drops it; a file overwritten by itself stays.
  ApplyOk("ns/b", {Add("q", 2)});
  EXPECT_TRUE(Visible(2, "ns/b"));
  ApplyOk("ns/b", {Add("q", 3)});
  EXPECT_FALSE(Visible(2, "ns/b"));
  EXPECT_TRUE(Visible(3, "ns/b"));
  // Deleted and re-added in one batch: still referenced at the end, still visible.
  ApplyOk("ns/b", {Del("q"), Add("r", 3)});
  EXPECT_TRUE(Visible(3, "ns/b"));
  // Another scope's visibility of the same file is untouched.
  Upload("ns/other", {3});
  ApplyOk("ns/b", {Del("r")});
  EXPECT_FALSE(Visible(3, "ns/b"));
  EXPECT_TRUE(Visible(3, "ns/other"));
}

TEST_P(BucketIndexContract, AFailingOpChangesNothingAndTheRestCommitDurably) {
  Create("ns", "b");
  Upload("ns/b", {1, 2});
  ApplyOk("ns/b", {Add("keep", 2)});
  BucketBatchResult r = Apply("ns/b",
                              {Add("a", 1), Add("bad", 42), Move("nothing", "x"), Del("keep"),
                               CopyFile("c", 2, "ns/missing"), Add("z", 2)},
                              9000);
  ASSERT_EQ(r.ops.size(), 6u);
  EXPECT_TRUE(r.ops[0].ok);
  EXPECT_FALSE(r.ops[1].ok);
  EXPECT_FALSE(r.ops[2].ok);
  EXPECT_EQ(r.ops[2].error, "nothing at nothing");
  EXPECT_TRUE(r.ops[3].ok);
  EXPECT_FALSE(r.ops[4].ok);
  EXPECT_EQ(r.ops[4].error, "source bucket ns/missing not found");
  EXPECT_TRUE(r.ops[5].ok);
  EXPECT_EQ(r.succeeded, 3u);
  const std::map<std::string, Hash> want = {{"a", F(1)}, {"z", F(2)}};
  EXPECT_EQ(Entries("ns", "b"), want);
  // Durable: a fresh index on the same file sees the same state.
  Reopen();
  EXPECT_EQ(Entries("ns", "b"), want);
  auto b = **index_->GetBucket("ns", "b");
  EXPECT_EQ(b.total_files, 2u);
  EXPECT_EQ(b.total_size, SizeOf(1) + SizeOf(2));
  EXPECT_EQ(b.updated_at_ms, 9000);
  EXPECT_TRUE(Visible(1, "ns/b"));
}

TEST_P(BucketIndexContract, CopyFileBetweenBuckets) {
  Create("ns", "src");
  Create("ns", "dst");
  Upload("ns/src", {1, 2});
  ApplyOk("ns/src", {Add("f", 1, 55, "text/plain")});
  EXPECT_FALSE(Visible(1, "ns/dst"));
  BucketBatchResult r = Apply("ns/dst", {CopyFile("copy", 1, "ns/src"), CopyFile("x", 2, "ns/src"),
                                         CopyFile("y", 1, "ns/none"), CopyFile("w", 1, "bad")});
  EXPECT_TRUE(r.ops[0].ok) << r.ops[0].error;
  EXPECT_FALSE(r.ops[1].ok);  // file 2 is registered for src, but no entry points at it
  EXPECT_EQ(r.ops[1].error, "file " + F(2).ToHex() + " not found in bucket ns/src");
  EXPECT_FALSE(r.ops[2].ok);
  EXPECT_FALSE(r.ops[3].ok);
  EXPECT_TRUE(Visible(1, "ns/dst"));
  auto e = **index_->GetBucketEntry("ns", "dst", "copy");
  EXPECT_EQ(e.file_hash, F(1));
  EXPECT_EQ(e.size, SizeOf(1));
  EXPECT_EQ(e.sha256, MakeFile(1).sha256);
  EXPECT_EQ(e.mtime_ms, 55);  // taken from the source entry when the op has none
  EXPECT_EQ(e.content_type, "text/plain");
  // The copy lives on its own: deleting the source keeps the target's visibility.
  ApplyOk("ns/src", {Del("f")});
  EXPECT_FALSE(Visible(1, "ns/src"));
  EXPECT_TRUE(Visible(1, "ns/dst"));
  // Within one bucket (empty source = this bucket).
  ApplyOk("ns/dst", {CopyFile("copy2", 1, "")});
  EXPECT_EQ(Entries("ns", "dst").size(), 2u);
  ExpectTotalsConsistent("ns", "dst");
}

TEST_P(BucketIndexContract, CopyPrefixSameAndOtherBucket) {
  Create("ns", "b");
  Create("ns", "c");
  Upload("ns/b", {1, 2, 3, 4});
  Upload("ns/c", {4});
  ApplyOk("ns/b", {Add("d/x", 1), Add("d/sub/y", 2), Add("d", 3), Add("d-sibling", 4),
                   Add("d.txt", 4), Add("e/x", 4)});
  BucketBatchResult r = Apply("ns/b", {CopyPrefix("d", "e")});
  ASSERT_TRUE(r.ops[0].ok) << r.ops[0].error;
  EXPECT_EQ(r.ops[0].entries_changed, 3u);
  const std::map<std::string, Hash> want = {{"d", F(3)},       {"d-sibling", F(4)}, {"d.txt", F(4)},
                                            {"d/sub/y", F(2)}, {"d/x", F(1)},       {"e", F(3)},
                                            {"e/sub/y", F(2)}, {"e/x", F(1)}};  // e/x overwritten
  EXPECT_EQ(Entries("ns", "b"), want);
  ExpectTotalsConsistent("ns", "b");
  EXPECT_TRUE(Visible(4, "ns/b"));  // still referenced by d-sibling and d.txt
  // Into another bucket: the copied files become visible there; its overwritten file loses it.
  ApplyOk("ns/c", {Add("t/old", 4)});
  r = Apply("ns/c", {CopyPrefix("d/sub", "t/old", "ns/b")});
  ASSERT_TRUE(r.ops[0].ok) << r.ops[0].error;
  EXPECT_EQ(Entries("ns", "c"), (std::map<std::string, Hash>{{"t/old/y", F(2)}, {"t/old", F(4)}}));
  ApplyOk("ns/c", {CopyPrefix("d/x", "t/old", "ns/b")});  // a single file onto a file
  EXPECT_EQ(Entries("ns", "c"), (std::map<std::string, Hash>{{"t/old/y", F(2)}, {"t/old", F(1)}}));
  EXPECT_FALSE(Visible(4, "ns/c"));
  EXPECT_TRUE(Visible(1, "ns/c"));
  EXPECT_TRUE(Visible(2, "ns/c"));
  ExpectTotalsConsistent("ns", "c");
  // Errors: nothing there, missing source bucket. Copying onto itself changes nothing.
  r = Apply("ns/c", {CopyPrefix("zzz", "q", "ns/b"), CopyPrefix("d", "q", "ns/none"),
                     CopyPrefix("t", "t")});
  EXPECT_EQ(r.ops[0].error, "nothing at zzz");
  EXPECT_EQ(r.ops[1].error, "source bucket ns/none not found");
  EXPECT_TRUE(r.ops[2].ok);
  EXPECT_EQ(r.ops[2].entries_changed, 0u);
  // Copying a directory into its own subdirectory copies the entries as they were.
  ApplyOk("ns/c", {CopyPrefix("t", "t/again")});
  EXPECT_EQ(
      Entries("ns", "c"),
      (std::map<std::string, Hash>{
          {"t/again/old", F(1)}, {"t/again/old/y", F(2)}, {"t/old/y", F(2)}, {"t/old", F(1)}}));
  ExpectTotalsConsistent("ns", "c");
}

TEST_P(BucketIndexContract, MovePrefixRenamesDirectories) {
  Create("ns", "b");
  Upload("ns/b", {1, 2, 3, 4, 5});
  ApplyOk("ns/b", {Add("a/x", 1), Add("a/sub/y", 2), Add("a-z", 3), Add("b/x", 4), Add("c", 5)});
  BucketBatchResult r =
      Apply("ns/b", {Move("a", "b"), Move("b", "b/inner"), Move("none", "q"), Move("c", "c")});
  EXPECT_TRUE(r.ops[0].ok) << r.ops[0].error;
  EXPECT_EQ(r.ops[0].entries_changed, 2u);
  EXPECT_FALSE(r.ops[1].ok);
  EXPECT_EQ(r.ops[1].error, "cannot move b into itself (b/inner)");
  EXPECT_FALSE(r.ops[2].ok);
  EXPECT_TRUE(r.ops[3].ok);  // onto itself: nothing to do
  EXPECT_EQ(Entries("ns", "b"), (std::map<std::string, Hash>{
                                    {"a-z", F(3)}, {"b/sub/y", F(2)}, {"b/x", F(1)}, {"c", F(5)}}));
  EXPECT_FALSE(Visible(4, "ns/b"));  // b/x was overwritten, nothing else referenced file 4
  EXPECT_TRUE(Visible(1, "ns/b"));
  ExpectTotalsConsistent("ns", "b");
  // Moving up onto the parent, where the target range overlaps the source range.
  ApplyOk("ns/b", {Add("p/q/q/x", 1), Add("p/q/x", 2), Add("p/q/y", 3)});
  ApplyOk("ns/b", {Move("p/q", "p")});
  auto entries = Entries("ns", "b");
  EXPECT_EQ(entries["p/q/x"], F(1));
  EXPECT_EQ(entries["p/x"], F(2));
  EXPECT_EQ(entries["p/y"], F(3));
  EXPECT_EQ(entries.count("p/q/q/x"), 0u);
  EXPECT_EQ(entries.count("p/q/y"), 0u);
  ExpectTotalsConsistent("ns", "b");
  // A single file, and a multi-byte UTF-8 directory name.
  ApplyOk("ns/b", {Move("c", "dir/c"), Add("é/ü", 3), Move("é", "ß")});
  entries = Entries("ns", "b");
  EXPECT_EQ(entries["dir/c"], F(5));
  EXPECT_EQ(entries["ß/ü"], F(3));
  EXPECT_EQ(entries.count("é/ü"), 0u);
  ExpectTotalsConsistent("ns", "b");
}

TEST_P(BucketIndexContract, MoveOfALargeDirectoryIsOneOperation) {
  Create("ns", "b");
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < 50; ++i) ids.push_back(i);
  Upload("ns/b", ids);
  std::vector<BucketOp> ops;
  for (int i = 0; i < 20000; ++i) {
    ops.push_back(Add("big/" + std::to_string(i), static_cast<uint64_t>(i % 50)));
  }
  ApplyOk("ns/b", ops);
  BucketBatchResult r = Apply("ns/b", {Move("big", "renamed")});
  ASSERT_TRUE(r.ops[0].ok);
  EXPECT_EQ(r.ops[0].entries_changed, 20000u);
  auto page = index_->ListBucketTree("ns", "b", "", false, "", 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_TRUE(page->items[0].is_directory);
  EXPECT_EQ(page->items[0].path, "renamed");
  EXPECT_EQ((**index_->GetBucket("ns", "b")).total_files, 20000u);
  EXPECT_TRUE(Visible(7, "ns/b"));
}

TEST_P(BucketIndexContract, GetBucketEntriesInTheOrderGiven) {
  Create("ns", "b");
  Upload("ns/b", {1, 2});
  ApplyOk("ns/b", {Add("a", 1), Add("b/c", 2)});
  const std::vector<std::string> paths = {"b/c", "missing", "a", "b"};
  auto got = index_->GetBucketEntries("ns", "b", paths);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].path, "b/c");
  EXPECT_EQ((*got)[0].file_hash, F(2));
  EXPECT_EQ((*got)[1].path, "a");
}

// --- listings ---

struct Item {
  bool dir;
  std::string path;
  friend bool operator==(const Item&, const Item&) = default;
};

// The listing of `prefix` computed directly from the set of paths.
std::vector<Item> ExpectedListing(const std::set<std::string>& paths, const std::string& prefix,
                                  bool recursive) {
  if (!prefix.empty() && paths.count(prefix)) return {{false, prefix}};
  const std::string dir = prefix.empty() ? "" : prefix + "/";
  std::vector<Item> out;
  std::set<std::string> dirs_seen;
  for (const std::string& p : paths) {
    if (p.compare(0, dir.size(), dir) != 0 || p.size() == dir.size()) continue;
    const std::string rest = p.substr(dir.size());
    const size_t slash = rest.find('/');
    if (recursive || slash == std::string::npos) {
      out.push_back({false, p});
    } else if (dirs_seen.insert(dir + rest.substr(0, slash)).second) {
      out.push_back({true, dir + rest.substr(0, slash)});
    }
  }
  return out;
}

TEST_P(BucketIndexContract, TreeListingMatchesTheExpectationAcrossPages) {
  Create("ns", "b");
  Upload("ns/b", {1});
  std::set<std::string> paths = {"a",  "a-b", "a.txt", "a/b", "a/b/c", "a/b-c/d",    "a/b/c/d",
                                 "a0", "a/z", "é/x",   "é",   "z",     "deep/1/2/3", "deep/1/x"};
  std::mt19937 rng(7);
  for (int i = 0; i < 1500; ++i) {
    std::string p = "r";
    const int depth = 1 + static_cast<int>(rng() % 4);
    for (int d = 0; d < depth; ++d) p += "/" + std::string(1, static_cast<char>('a' + rng() % 5));
    p += std::to_string(rng() % 50);
    paths.insert(p);
  }
  std::vector<BucketOp> ops;
  for (const auto& p : paths) ops.push_back(Add(p, 1));
  ApplyOk("ns/b", ops);
  std::set<std::string> prefixes = {"", "a", "a/b", "r", "r/a", "r/b/c", "deep", "nothing", "é"};
  for (const auto& p : paths) {  // every directory that exists
    for (size_t s = p.find('/'); s != std::string::npos; s = p.find('/', s + 1)) {
      if (rng() % 8 == 0) prefixes.insert(p.substr(0, s));
    }
  }
  for (const std::string& prefix : prefixes) {
    for (bool recursive : {true, false}) {
      const std::vector<Item> want = ExpectedListing(paths, prefix, recursive);
      for (size_t limit : {size_t{1}, size_t{3}, size_t{100}, size_t{5000}}) {
        std::vector<Item> got;
        std::string cursor;
        size_t pages = 0;
        while (true) {
          auto page = index_->ListBucketTree("ns", "b", prefix, recursive, cursor, limit);
          ASSERT_TRUE(page.ok()) << page.status().ToString();
          ASSERT_LE(page->items.size(), limit);
          pages++;
          for (const auto& item : page->items) {
            got.push_back({item.is_directory, item.path});
            if (!item.is_directory) {
              EXPECT_EQ(item.entry.path, item.path);
              EXPECT_EQ(item.entry.file_hash, F(1));
            }
          }
          if (!page->next_cursor) break;
          ASSERT_EQ(page->items.size(), limit);  // only full pages promise more
          cursor = *page->next_cursor;
        }
        EXPECT_EQ(got, want) << "prefix '" << prefix << "' recursive " << recursive << " limit "
                             << limit;
        EXPECT_EQ(pages, std::max<size_t>(1, (want.size() + limit - 1) / limit));
      }
    }
  }
}

TEST_P(BucketIndexContract, TreeListingFilePrefixAndCursorErrors) {
  Create("ns", "b");
  Upload("ns/b", {1});
  ApplyOk("ns/b", {Add("dir/file", 1), Add("dir/sub/x", 1), Add("other/y", 1)});
  auto page = index_->ListBucketTree("ns", "b", "dir/file", false, "", 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].path, "dir/file");
  EXPECT_FALSE(page->next_cursor);
  // Malformed cursors.
  for (const std::string bad : {"zz", "6", "66", "7861", "g161", "%%%%"}) {
    EXPECT_EQ(index_->ListBucketTree("ns", "b", "", true, bad, 10).status().code(),
              Code::kInvalidArgument)
        << bad;
  }
  // A cursor of another listing.
  page = index_->ListBucketTree("ns", "b", "dir", false, "", 1);
  ASSERT_TRUE(page.ok() && page->next_cursor);
  const std::string cursor = *page->next_cursor;
  EXPECT_TRUE(index_->ListBucketTree("ns", "b", "dir", false, cursor, 1).ok());
  EXPECT_EQ(index_->ListBucketTree("ns", "b", "other", false, cursor, 1).status().code(),
            Code::kInvalidArgument);
  page = index_->ListBucketTree("ns", "b", "dir", false, "", 2);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_TRUE(page->items[1].is_directory);
  EXPECT_FALSE(page->next_cursor);
  page = index_->ListBucketTree("ns", "b", "", false, "", 1);  // "dir" directory
  ASSERT_TRUE(page.ok() && page->next_cursor);
  EXPECT_EQ(index_->ListBucketTree("ns", "b", "", true, *page->next_cursor, 1).status().code(),
            Code::kInvalidArgument);  // a directory cursor in a recursive listing
  EXPECT_EQ(index_->ListBucketTree("ns", "b", "", true, "", 0).status().code(),
            Code::kInvalidArgument);
  // An empty bucket lists nothing.
  Create("ns", "empty");
  page = index_->ListBucketTree("ns", "empty", "", false, "", 10);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->items.empty());
  EXPECT_FALSE(page->next_cursor);
}

// --- concurrency ---

TEST_P(BucketIndexContract, ConcurrentBatchesOnTheSamePathsNeverInterleave) {
  Create("ns", "b");
  constexpr int kThreads = 6;
  constexpr int kRounds = 15;
  constexpr int kPaths = 20;
  // Each batch writes its own file: a file whose entries are all overwritten loses its
  // visibility and could not be added again without a new upload.
  auto file_of = [](int t, int round) { return 100 + static_cast<uint64_t>(t * kRounds + round); };
  std::vector<uint64_t> ids;
  for (int t = 0; t < kThreads; ++t) {
    for (int round = 0; round < kRounds; ++round) ids.push_back(file_of(t, round));
  }
  Upload("ns/b", ids);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        std::vector<BucketOp> ops;
        // Every batch writes all paths with this thread's file; half of them also move a
        // directory back and forth, which must never be seen half-done.
        for (int p = 0; p < kPaths; ++p) {
          ops.push_back(Add("p/" + std::to_string(p), file_of(t, round)));
        }
        ops.push_back(Move("p", "q"));
        ops.push_back(Move("q", "p"));
        auto r = index_->ApplyBucketBatch("ns", "b", ops, 1000 + round);
        if (!r.ok() || r->succeeded != ops.size()) failures++;
        // A concurrent reader sees whole batches only: every path, all one file.
        auto page = index_->ListBucketTree("ns", "b", "", true, "", 1000);
        if (!page.ok() || page->items.size() != kPaths) {
          failures++;
          continue;
        }
        for (const auto& item : page->items) {
          if (item.entry.file_hash != page->items[0].entry.file_hash) failures++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  auto entries = Entries("ns", "b");
  ASSERT_EQ(entries.size(), static_cast<size_t>(kPaths));
  const Hash winner = entries.begin()->second;
  int visible = 0;
  for (uint64_t id : ids) {
    if (F(id) == winner) {
      EXPECT_TRUE(Visible(id, "ns/b"));
    } else if (Visible(id, "ns/b")) {
      visible++;
    }
  }
  for (const auto& [path, hash] : entries) EXPECT_EQ(hash, winner) << path;
  EXPECT_EQ(visible, 0);  // every overwritten file lost its last reference
  ExpectTotalsConsistent("ns", "b");
}

}  // namespace
}  // namespace xet::testing::bucket_test
