// The Index contract, POSIX part (bucket_records.h): explicit directory entries (add, list
// recursively or not, paths-info, delete, move, replace), setMetadata on every kind of
// path, symbolic links, special files (FIFOs, sockets, device nodes), movePrefix's
// no_replace, the generation counter, and that none of
// it counts in the totals. Every Index backend runs it (BucketPosixContract).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/bucket_index_contract.h"

namespace xet::testing::bucket_test {
namespace {

using Code = Status::Code;

PosixMetadata Posix(uint32_t mode, uint32_t uid = 1000, uint32_t gid = 100) {
  PosixMetadata p;
  p.mode = mode;
  p.uid = uid;
  p.gid = gid;
  return p;
}
PosixMetadata DirPosix(uint32_t perm = 0755) { return Posix(kPosixDirectory | perm); }
PosixMetadata FilePosix(uint32_t perm = 0644) { return Posix(kPosixRegular | perm); }
PosixMetadata LinkPosix(std::string target) {
  PosixMetadata p = Posix(kPosixSymlink | 0777);
  p.target = std::move(target);
  return p;
}

BucketOp AddDir(std::string path, std::optional<PosixMetadata> posix, int64_t mtime = 0) {
  BucketOp op;
  op.kind = Kind::kAddDirectory;
  op.path = std::move(path);
  op.posix = std::move(posix);
  op.mtime_ms = mtime;
  return op;
}
BucketOp SetMeta(std::string path, PosixMetadata posix, int64_t mtime = 0) {
  BucketOp op;
  op.kind = Kind::kSetMetadata;
  op.path = std::move(path);
  op.posix = std::move(posix);
  op.mtime_ms = mtime;
  return op;
}
BucketOp AddWith(std::string path, uint64_t n, PosixMetadata posix) {
  BucketOp op = Add(std::move(path), n);
  op.posix = std::move(posix);
  return op;
}
BucketOp Symlink(std::string path, std::string target) {
  BucketOp op;
  op.kind = Kind::kAddFile;
  op.path = std::move(path);
  op.posix = LinkPosix(std::move(target));
  return op;  // file_hash: zero, the empty file
}
BucketOp MoveNoReplace(std::string from, std::string to) {
  BucketOp op = Move(std::move(from), std::move(to));
  op.no_replace = true;
  return op;
}

using V = std::vector<std::string>;

TEST_P(BucketPosixContract, DirectoryEntriesAreListedOnceRecursiveOrNot) {
  ApplyOk("ns/b", {AddDir("d", DirPosix(0750), 5000), Add("d/f", 1), Add("d-1", 2),
                   AddDir("e", DirPosix()), AddDir("x/y", std::nullopt), Add("top", 3)});
  EXPECT_EQ(Names("", false), (V{"f:d-1", "D:d", "D:e", "f:top", "d:x"}));
  // Pages of one item walk the same listing.
  EXPECT_EQ(Names("", false, 1), Names("", false));
  EXPECT_EQ(Names("", true), (V{"f:d-1", "D:d", "f:d/f", "D:e", "f:top", "D:x/y"}));
  EXPECT_EQ(Names("", true, 1), Names("", true));
  EXPECT_EQ(Names("", true, 2), Names("", true));
  // A directory's own entry is not an item of its listing; an empty one lists nothing.
  EXPECT_EQ(Names("d", false), (V{"f:d/f"}));
  EXPECT_EQ(Names("d", true), (V{"f:d/f"}));
  EXPECT_EQ(Names("e", false), V{});
  EXPECT_EQ(Names("x", false), (V{"D:x/y"}));
  EXPECT_EQ(Names("x", true), (V{"D:x/y"}));

  // The explicit directory's item carries its entry: posix, mtime.
  const auto items = List("", false);
  ASSERT_EQ(items.size(), 5u);
  const BucketEntry& d = items[1].entry;
  EXPECT_EQ(d.path, "d");
  EXPECT_TRUE(d.is_directory);
  EXPECT_EQ(d.mtime_ms, 5000);
  EXPECT_EQ(d.size, 0u);
  ASSERT_TRUE(d.posix.has_value());
  EXPECT_EQ(*d.posix, DirPosix(0750));
  EXPECT_FALSE(items[4].entry.posix.has_value());  // x: implied only
  EXPECT_FALSE(items[4].entry.is_directory);
  const auto rec = List("", true);
  ASSERT_EQ(rec.size(), 6u);
  EXPECT_FALSE(rec[5].entry.posix.has_value());  // x/y: an entry without posix
  EXPECT_TRUE(rec[5].entry.is_directory);

  // paths-info: directory entries too; implied directories and absent paths are skipped.
  const std::vector<std::string> paths = {"d", "x", "d/f", "nope", "x/y", "e"};
  auto got = index_->GetBucketEntries("ns", "b", paths);
  ASSERT_TRUE(got.ok());
  V names;
  for (const auto& e : *got) names.push_back((e.is_directory ? "D:" : "f:") + e.path);
  EXPECT_EQ(names, (V{"D:d", "f:d/f", "D:x/y", "D:e"}));
  EXPECT_EQ((*got)[0], d);
  // A tree prefix naming a directory entry lists the directory, not the entry.
  EXPECT_EQ(Names("x/y", false), V{});
  // Directory entries count in no total.
  ExpectTotalsConsistent("ns", "b");
  EXPECT_EQ((*index_->GetBucket("ns", "b"))->total_files, 3u);
}

TEST_P(BucketPosixContract, FilesCarryPosixAndXattrsRoundTrip) {
  PosixMetadata p = FilePosix(04755);
  p.atime_ms = 1'700'000'000'123;
  p.xattrs = {{"user.bin", std::string("\0\x01\xff", 3)}, {"user.empty", ""}, {"user.x", "v"}};
  ApplyOk("ns/b", {AddWith("f", 1, p), Add("plain", 2)});
  auto f = At("f");
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->is_directory);
  EXPECT_EQ(f->file_hash, F(1));
  EXPECT_EQ(f->size, SizeOf(1));
  ASSERT_TRUE(f->posix.has_value());
  EXPECT_EQ(*f->posix, p);
  EXPECT_FALSE(At("plain")->posix.has_value());
  // A later addFile without posix drops it (the entry is replaced whole).
  ApplyOk("ns/b", {Add("f", 2)});
  EXPECT_FALSE(At("f")->posix.has_value());
  // Directory posix on addFile is refused.
  ExpectFails(AddWith("g", 1, DirPosix()), "regular file, a symbolic link or a special file");
  EXPECT_FALSE(At("g").has_value());
}

TEST_P(BucketPosixContract, SymbolicLinksAreTheEmptyFileWithoutUpload) {
  ApplyOk("ns/b", {Symlink("l", "../target/x")});
  auto l = At("l");
  ASSERT_TRUE(l.has_value());
  EXPECT_TRUE(l->file_hash.IsZero());
  EXPECT_EQ(l->size, 0u);
  ASSERT_TRUE(l->posix.has_value());
  EXPECT_EQ(l->posix->target, "../target/x");
  EXPECT_EQ((*index_->GetBucket("ns", "b"))->total_files, 1u);
  BucketOp with_content = Symlink("m", "t");
  with_content.file_hash = F(1);
  ExpectFails(with_content, "empty file");
  EXPECT_FALSE(At("m").has_value());
  // Copies of a directory holding links and directory entries, to another bucket.
  ApplyOk("ns/b", {AddDir("dir", DirPosix()), Symlink("dir/l", "x"), Add("dir/f", 1)});
  Create("ns", "c");
  ApplyOk("ns/c", {CopyPrefix("dir", "copy", "ns/b")});
  auto copied = index_->GetBucketEntries("ns", "c", std::vector<std::string>{"copy", "copy/l"});
  ASSERT_TRUE(copied.ok());
  ASSERT_EQ(copied->size(), 2u);
  EXPECT_TRUE((*copied)[0].is_directory);
  EXPECT_EQ((*copied)[1].posix->target, "x");
  EXPECT_TRUE(Visible(1, "ns/c"));
  ExpectTotalsConsistent("ns", "c");
}

// FIFOs, sockets and device nodes are stored like symbolic links: the empty file with
// their posix (and a device's number), listed as files of size 0.
TEST_P(BucketPosixContract, SpecialFilesAreTheEmptyFileWithoutUpload) {
  auto special = [](std::string path, uint32_t mode, uint32_t rdev = 0) {
    BucketOp op;
    op.kind = Kind::kAddFile;
    op.path = std::move(path);
    op.posix = Posix(mode, 0, 0);
    op.posix->rdev = rdev;
    return op;  // file_hash: zero, the empty file
  };
  // Modes written in octal as st_mode has them: FIFO 0010000, socket 0140000, character
  // device 0020000, block device 0060000. Device numbers as glibc's makedev(8, 1) and
  // makedev(4095, 1048575) encode them.
  ApplyOk("ns/b", {special("p", 0010644), special("s", 0140755), special("dev/c", 0020620, 0x801),
                   special("dev/b", 0060660, 0xFFFFFFFFu), Add("f", 1)});
  EXPECT_EQ(Names("", true), (V{"f:dev/b", "f:dev/c", "f:f", "f:p", "f:s"}));
  for (const char* path : {"p", "s", "dev/c", "dev/b"}) {
    auto e = At(path);
    ASSERT_TRUE(e.has_value()) << path;
    EXPECT_FALSE(e->is_directory) << path;
    EXPECT_TRUE(e->file_hash.IsZero()) << path;
    EXPECT_EQ(e->size, 0u) << path;
    ASSERT_TRUE(e->posix.has_value()) << path;
  }
  EXPECT_EQ(At("p")->posix->mode, 0010644u);
  EXPECT_EQ(At("s")->posix->mode, 0140755u);
  EXPECT_EQ(At("dev/c")->posix->mode, 0020620u);
  EXPECT_EQ(At("dev/c")->posix->rdev, 0x801u);
  EXPECT_EQ(At("dev/b")->posix->rdev, 0xFFFFFFFFu);
  EXPECT_EQ(At("p")->posix->rdev, 0u);
  // With content: refused, nothing written.
  BucketOp with_content = special("q", 0010644);
  with_content.file_hash = F(1);
  ExpectFails(with_content, "empty file");
  EXPECT_FALSE(At("q").has_value());
  // chmod/chown: setMetadata keeps the type and device number it is given.
  PosixMetadata chmod = Posix(0020600, 7, 8);
  chmod.rdev = 0x801;
  ApplyOk("ns/b", {SetMeta("dev/c", chmod, 4000)});
  EXPECT_EQ(*At("dev/c")->posix, chmod);
  EXPECT_EQ(At("dev/c")->mtime_ms, 4000);
  // A file with content cannot become a special file; a special file not a directory.
  const uint64_t gen = Generation();
  ExpectFails(SetMeta("f", Posix(0010644)), "has content");
  ExpectFails(SetMeta("p", DirPosix()), "is a file");
  ExpectFails(AddDir("p", DirPosix()), "a file exists at p");
  EXPECT_EQ(Generation(), gen);
  // Renames and removals as for any entry.
  ApplyOk("ns/b", {Move("p", "dev/p"), Del("s")});
  EXPECT_EQ(Names("", true), (V{"f:dev/b", "f:dev/c", "f:dev/p", "f:f"}));
  EXPECT_EQ(At("dev/p")->posix->mode, 0010644u);
  // Counted as files of size 0.
  ExpectTotalsConsistent("ns", "b");
  EXPECT_EQ((*index_->GetBucket("ns", "b"))->total_files, 4u);
  EXPECT_EQ((*index_->GetBucket("ns", "b"))->total_size, SizeOf(1));
  Reopen();
  EXPECT_EQ(*At("dev/c")->posix, chmod);
  EXPECT_EQ(At("dev/b")->posix->rdev, 0xFFFFFFFFu);
}

TEST_P(BucketPosixContract, AddDirectoryReplacesAndFilesReplaceDirectories) {
  ApplyOk("ns/b", {AddDir("d", DirPosix(0700), 10)});
  ApplyOk("ns/b", {AddDir("d", DirPosix(0755), 20)});  // replaced
  EXPECT_EQ(At("d")->posix->mode, kPosixDirectory | 0755);
  EXPECT_EQ(At("d")->mtime_ms, 20);
  // A file at the path of a directory entry replaces it.
  ApplyOk("ns/b", {Add("d", 1)});
  EXPECT_FALSE(At("d")->is_directory);
  EXPECT_EQ(Names("", true), (V{"f:d"}));
  // A directory entry where a file is fails, and changes nothing.
  ExpectFails(AddDir("d", DirPosix()), "a file exists at d");
  ExpectFails(AddDir("e", FilePosix()), "directory");
  EXPECT_EQ(Names("", true), (V{"f:d"}));
  // copyFile onto a directory entry replaces it too.
  ApplyOk("ns/b", {AddDir("c", DirPosix())});
  ApplyOk("ns/b", {CopyFile("c", 1, "")});
  EXPECT_EQ(Names("", true), (V{"f:c", "f:d"}));
  ExpectTotalsConsistent("ns", "b");
}

TEST_P(BucketPosixContract, SetMetadataOnEveryKindOfPath) {
  ApplyOk("ns/b", {Add("f", 1, 111), AddDir("m", DirPosix()), Add("imp/x", 2), Symlink("l", "t")},
          3000);
  const BucketEntry before = *At("f");
  PosixMetadata fp = FilePosix(0600);
  fp.xattrs = {{"user.a", "1"}};
  ApplyOk("ns/b", {SetMeta("f", fp, 999)});
  BucketEntry after = *At("f");
  EXPECT_EQ(after.file_hash, before.file_hash);
  EXPECT_EQ(after.size, before.size);
  EXPECT_EQ(after.mtime_ms, 999);
  EXPECT_EQ(*after.posix, fp);
  // Without mtime the mtime stays.
  ApplyOk("ns/b", {SetMeta("f", FilePosix(0640))});
  EXPECT_EQ(At("f")->mtime_ms, 999);
  EXPECT_EQ(At("f")->posix->mode, kPosixRegular | 0640);
  // A directory entry.
  ApplyOk("ns/b", {SetMeta("m", DirPosix(0711), 5)});
  EXPECT_EQ(At("m")->posix->mode, kPosixDirectory | 0711);
  EXPECT_EQ(At("m")->mtime_ms, 5);
  // An implied directory gets an explicit entry.
  EXPECT_FALSE(At("imp").has_value());
  ApplyOk("ns/b", {SetMeta("imp", DirPosix(0701))});
  ASSERT_TRUE(At("imp").has_value());
  EXPECT_TRUE(At("imp")->is_directory);
  EXPECT_EQ(Names("", false), (V{"f:f", "D:imp", "f:l", "D:m"}));
  // A symbolic link may change its target.
  ApplyOk("ns/b", {SetMeta("l", LinkPosix("u"))});
  EXPECT_EQ(At("l")->posix->target, "u");
  // Kind mismatches and absent paths fail and change nothing.
  const uint64_t gen = Generation();
  ExpectFails(SetMeta("nope", FilePosix()), "nothing at nope");
  ExpectFails(SetMeta("imp/x/y", DirPosix()), "nothing at imp/x/y");
  ExpectFails(SetMeta("f", DirPosix()), "is a file");
  ExpectFails(SetMeta("f", LinkPosix("t")), "symbolic link");
  ExpectFails(SetMeta("m", FilePosix()), "is a directory");
  EXPECT_EQ(Generation(), gen);
  EXPECT_EQ(At("f")->posix->mode, kPosixRegular | 0640);
  ExpectTotalsConsistent("ns", "b");
}

TEST_P(BucketPosixContract, DeleteFileRemovesADirectoryEntryOnly) {
  ApplyOk("ns/b", {AddDir("d", DirPosix()), Add("d/f", 1), AddDir("e", DirPosix())});
  BucketBatchResult r = Apply("ns/b", {Del("d"), Del("e"), Del("e")});
  ASSERT_EQ(r.ops.size(), 3u);
  EXPECT_TRUE(r.ops[0].ok && r.ops[1].ok && r.ops[2].ok);
  EXPECT_EQ(r.ops[0].entries_changed, 1u);
  EXPECT_EQ(r.ops[2].entries_changed, 0u);
  EXPECT_EQ(Names("", true), (V{"f:d/f"}));
  EXPECT_EQ(Names("", false), (V{"d:d"}));  // still implied by d/f
  ExpectTotalsConsistent("ns", "b");
}

TEST_P(BucketPosixContract, MovePrefixMovesDirectoryEntriesAndReplacesThem) {
  ApplyOk("ns/b", {AddDir("d", DirPosix(0700)), Add("d/f", 1), AddDir("d/sub", DirPosix()),
                   Add("file", 2), AddDir("target", DirPosix())});
  ApplyOk("ns/b", {Move("d", "m")});
  EXPECT_EQ(Names("", true), (V{"f:file", "D:m", "f:m/f", "D:m/sub", "D:target"}));
  EXPECT_EQ(At("m")->posix->mode, kPosixDirectory | 0700);
  // A file moved onto a directory entry replaces it.
  ApplyOk("ns/b", {Move("file", "target")});
  EXPECT_EQ(Names("", true), (V{"D:m", "f:m/f", "D:m/sub", "f:target"}));
  EXPECT_EQ(At("target")->file_hash, F(2));
  // An empty directory entry moves alone.
  ApplyOk("ns/b", {Move("m/sub", "sub")});
  EXPECT_EQ(Names("", true), (V{"D:m", "f:m/f", "D:sub", "f:target"}));
  ExpectTotalsConsistent("ns", "b");
}

TEST_P(BucketPosixContract, MovePrefixNoReplace) {
  ApplyOk("ns/b", {Add("a/f", 1), Add("b/z", 2), Add("c", 3), AddDir("e", DirPosix())});
  const uint64_t gen = Generation();
  ExpectFails(MoveNoReplace("a", "b"), "b exists");
  ExpectFails(MoveNoReplace("a", "c"), "c exists");
  ExpectFails(MoveNoReplace("a", "e"), "e exists");
  EXPECT_EQ(Generation(), gen);
  EXPECT_EQ(Names("", true), (V{"f:a/f", "f:b/z", "f:c", "D:e"}));
  ApplyOk("ns/b", {MoveNoReplace("a", "b2"), MoveNoReplace("c", "b2/c")});
  EXPECT_EQ(Names("", true), (V{"f:b/z", "f:b2/c", "f:b2/f", "D:e"}));
  // Without no_replace the target is overwritten, as before.
  ApplyOk("ns/b", {Move("b2/c", "b/z")});
  EXPECT_EQ(At("b/z")->file_hash, F(3));
}

TEST_P(BucketPosixContract, GenerationCountsChangingBatchesAndMoves) {
  EXPECT_EQ(Generation(), 0u);
  ApplyOk("ns/b", {Add("a", 1), Add("b", 2)});
  EXPECT_EQ(Generation(), 1u);
  // Batches that change nothing: a failed op, a delete of nothing.
  ExpectFails(Add("x", 99), "not found");
  ApplyOk("ns/b", {Del("nothing")});
  EXPECT_EQ(Generation(), 1u);
  ApplyOk("ns/b", {AddDir("d", DirPosix())});
  EXPECT_EQ(Generation(), 2u);
  ApplyOk("ns/b", {SetMeta("a", FilePosix()), Del("b")});
  EXPECT_EQ(Generation(), 3u);
  ASSERT_TRUE(index_->MoveBucket("ns", "b", "ns", "renamed", 9000).ok());
  auto moved = index_->GetBucket("ns", "renamed");
  ASSERT_TRUE(moved.ok() && moved->has_value());
  EXPECT_EQ((*moved)->generation, 4u);
  // Another bucket's batches do not count.
  Create("ns", "other");
  ApplyOk("ns/other", {Symlink("l", "t")});
  EXPECT_EQ((**index_->GetBucket("ns", "renamed")).generation, 4u);
  EXPECT_EQ((**index_->GetBucket("ns", "other")).generation, 1u);
}

TEST_P(BucketPosixContract, PagesEndEarlyWhenTheirMetadataIsLarge) {
  // Entries of ~120 KiB of metadata each, more than kMaxListingPosixBytes of them in all.
  PosixMetadata big = FilePosix();
  big.xattrs = {{"user.a", std::string(64 << 10, 'a')}, {"user.b", std::string(24 << 10, 'b')}};
  const size_t encoded = EncodePosixJson(big).size();
  const size_t n = kMaxListingPosixBytes / encoded + 10;
  std::vector<BucketOp> ops;
  for (size_t i = 0; i < n; ++i) ops.push_back(AddWith("f" + std::to_string(1000 + i), 1, big));
  PosixMetadata dir = big;
  dir.mode = kPosixDirectory | 0755;
  ops.push_back(AddDir("z", dir));
  ApplyOk("ns/b", ops);
  for (bool recursive : {false, true}) {
    auto first = index_->ListBucketTree("ns", "b", "", recursive, "", 10000);
    ASSERT_TRUE(first.ok());
    EXPECT_LT(first->items.size(), n);
    EXPECT_GE(first->items.size() * encoded, kMaxListingPosixBytes);
    EXPECT_TRUE(first->next_cursor.has_value());
    // Following the cursors gives everything once.
    EXPECT_EQ(List("", recursive, 10000).size(), n + 1);
  }
}

TEST_P(BucketPosixContract, SurvivesReopen) {
  PosixMetadata p = FilePosix();
  p.xattrs = {{"user.k", std::string(70000 / 2, 'v')}};
  ApplyOk("ns/b", {AddDir("d", DirPosix(), 7), AddWith("d/f", 1, p)});
  Reopen();
  EXPECT_EQ(Names("", true), (V{"D:d", "f:d/f"}));
  EXPECT_EQ(*At("d/f")->posix, p);
  EXPECT_EQ(Generation(), 1u);
}

}  // namespace
}  // namespace xet::testing::bucket_test
