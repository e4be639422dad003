// BucketFs against a real `xetstore serve`, without FUSE: the file system's calls as the
// kernel makes them, and what the bucket holds afterwards, seen through the Hub API. (The
// same paths through a real FUSE mount: tests/mount/run.)
#include "mount/bucket_fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/xattr.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/bucket_transfer/remote_connection.h"
#include "client/upload/file_hasher.h"
#include "format/merkle.h"
#include "mount/bucket_fs_fixture.h"
#include "mount/range_reader_content.h"
#include "support/test_support.h"

namespace xet {
namespace {

// A ContentSource that counts the bytes read from the remote versions through it.
class CountingContent final : public ContentSource {
 public:
  explicit CountingContent(ContentSource& inner) : inner_(inner) {}
  void Prefetch(const Hash& file, uint64_t size) override { inner_.Prefetch(file, size); }
  std::unique_ptr<FileStream> Open(const Hash& file, uint64_t size) override {
    return Counting(inner_.Open(file, size));
  }
  std::unique_ptr<FileStream> OpenForRanges(const Hash& file, uint64_t size) override {
    return Counting(inner_.OpenForRanges(file, size));
  }
  uint64_t bytes() const { return bytes_.load(); }

 private:
  class Counted final : public FileStream {
   public:
    Counted(std::unique_ptr<FileStream> s, std::atomic<uint64_t>& n) : s_(std::move(s)), n_(n) {}
    Result<size_t> Read(uint64_t offset, std::span<uint8_t> out) override {
      auto r = s_->Read(offset, out);
      if (r.ok()) n_ += *r;
      return r;
    }

   private:
    std::unique_ptr<FileStream> s_;
    std::atomic<uint64_t>& n_;
  };
  std::unique_ptr<FileStream> Counting(std::unique_ptr<FileStream> stream) {
    return std::make_unique<Counted>(std::move(stream), bytes_);
  }

  ContentSource& inner_;
  std::atomic<uint64_t> bytes_{0};
};

class BucketFsTest : public testing::BucketFsFixture {
 protected:
  // Creates `name` in `parent`, writes `data`, closes it; returns its inode.
  Ino WriteFile(Ino parent, const std::string& name, const std::string& data) {
    Ino ino = 0;
    NodeAttr attr;
    uint64_t fh = 0;
    EXPECT_EQ(fs_->Create(parent, name, 0644, O_WRONLY | O_CREAT, caller_, &ino, &attr, &fh), 0);
    EXPECT_EQ(fs_->Write(fh, 0, AsBytes(data)), 0);
    EXPECT_EQ(fs_->Flush(fh), 0);
    fs_->Release(fh);
    return ino;
  }

  Ino LookupIno(const std::string& name) {
    Ino ino = 0;
    NodeAttr attr;
    EXPECT_EQ(fs_->Lookup(kRootIno, name, &ino, &attr), 0);
    return ino;
  }

  std::string ReadFile(Ino ino) {
    uint64_t fh = 0;
    bool keep = false;
    EXPECT_EQ(fs_->Open(ino, O_RDONLY, &fh, &keep), 0);
    std::string out(1 << 20, '\0');
    size_t n = 0;
    EXPECT_EQ(fs_->Read(fh, 0, {reinterpret_cast<uint8_t*>(out.data()), out.size()}, &n), 0);
    fs_->Release(fh);
    out.resize(n);
    return out;
  }

  // The bucket's files, path -> size, from the Hub API.
  std::map<std::string, uint64_t> RemoteFiles() {
    std::map<std::string, uint64_t> files;
    for (const auto& [path, entry] : RemoteEntries()) files[path] = entry.size;
    return files;
  }

  static std::span<const uint8_t> AsBytes(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
  }
};

TEST(BucketFsPageCache, OnlyWriteOnlyDescriptorsOfFilesWithoutSetIdBitsBypassIt) {
  EXPECT_TRUE(BucketFs::BypassesPageCache(O_WRONLY, 0644));
  EXPECT_TRUE(BucketFs::BypassesPageCache(O_WRONLY | O_TRUNC, 0777));
  EXPECT_FALSE(BucketFs::BypassesPageCache(O_RDWR, 0644));
  EXPECT_FALSE(BucketFs::BypassesPageCache(O_RDONLY, 0644));
  // The kernel clears S_ISUID/S_ISGID on a write only on its cached path.
  EXPECT_FALSE(BucketFs::BypassesPageCache(O_WRONLY, 04755));
  EXPECT_FALSE(BucketFs::BypassesPageCache(O_WRONLY, 02775));
  EXPECT_FALSE(BucketFs::BypassesPageCache(O_WRONLY, 06777));
}

TEST_F(BucketFsTest, ClosedFilesAreCommittedAndReadBack) {
  const Ino a = WriteFile(kRootIno, "a.txt", "hello");
  const Ino b = WriteFile(kRootIno, "empty", "");
  ASSERT_EQ(fs_->SyncAll(), 0);
  EXPECT_EQ(RemoteFiles(), (std::map<std::string, uint64_t>{{"a.txt", 5}, {"empty", 0}}));
  EXPECT_EQ(ReadFile(a), "hello");
  EXPECT_EQ(ReadFile(b), "");
}

TEST_F(BucketFsTest, ADirectoryRenamedBeforeItsFilesAreCommittedTakesThemAlong) {
  Ino dir = 0;
  NodeAttr attr;
  ASSERT_EQ(fs_->MkDir(kRootIno, "d", 0755, caller_, &dir, &attr), 0);
  WriteFile(dir, "x", "pending");  // maybe not committed yet when the rename comes
  ASSERT_EQ(fs_->Rename(kRootIno, "d", kRootIno, "e", 0), 0);
  ASSERT_EQ(fs_->SyncAll(), 0);
  EXPECT_EQ(RemoteFiles(), (std::map<std::string, uint64_t>{{"e/x", 7}}));
  Ino e = 0;
  ASSERT_EQ(fs_->Lookup(kRootIno, "e", &e, &attr), 0);
  EXPECT_EQ(attr.kind, NodeKind::kDirectory);
  EXPECT_EQ(fs_->Lookup(kRootIno, "d", &e, &attr), ENOENT);
}

TEST_F(BucketFsTest, RenameRefusalsFollowPosix) {
  Ino d = 0, full = 0;
  NodeAttr attr;
  ASSERT_EQ(fs_->MkDir(kRootIno, "d", 0755, caller_, &d, &attr), 0);
  ASSERT_EQ(fs_->MkDir(kRootIno, "full", 0755, caller_, &full, &attr), 0);
  WriteFile(full, "f", "1");
  WriteFile(kRootIno, "file", "2");
  ASSERT_EQ(fs_->SyncAll(), 0);
  EXPECT_EQ(fs_->Rename(kRootIno, "d", kRootIno, "full", 0), ENOTEMPTY);
  EXPECT_EQ(fs_->Rename(kRootIno, "d", kRootIno, "file", 0), ENOTDIR);
  EXPECT_EQ(fs_->Rename(kRootIno, "file", kRootIno, "d", 0), EISDIR);
  EXPECT_EQ(fs_->Rename(kRootIno, "d", d, "inside", 0), EINVAL);
  EXPECT_EQ(fs_->Rename(kRootIno, "file", full, "f", RENAME_NOREPLACE), EEXIST);
  EXPECT_EQ(fs_->Rename(kRootIno, "file", full, "f", RENAME_EXCHANGE), EINVAL);
  EXPECT_EQ(fs_->RmDir(kRootIno, "full"), ENOTEMPTY);
  EXPECT_EQ(RemoteFiles(), (std::map<std::string, uint64_t>{{"file", 1}, {"full/f", 1}}));
}

TEST_F(BucketFsTest, AnUnlinkedOpenFileStaysReadableAndIsNotCommittedAgain) {
  const Ino ino = WriteFile(kRootIno, "doomed", "still here");
  ASSERT_EQ(fs_->SyncAll(), 0);
  uint64_t fh = 0;
  bool keep = false;
  ASSERT_EQ(fs_->Open(ino, O_RDWR, &fh, &keep), 0);
  ASSERT_EQ(fs_->Unlink(kRootIno, "doomed"), 0);
  EXPECT_EQ(fs_->Write(fh, 0, AsBytes("STILL")), 0);
  std::string out(64, '\0');
  size_t n = 0;
  ASSERT_EQ(fs_->Read(fh, 0, {reinterpret_cast<uint8_t*>(out.data()), out.size()}, &n), 0);
  EXPECT_EQ(out.substr(0, n), "STILL here");
  NodeAttr attr;
  ASSERT_EQ(fs_->GetAttr(ino, &attr), 0);
  EXPECT_TRUE(attr.unlinked);
  EXPECT_EQ(fs_->Fsync(fh), 0);
  fs_->Release(fh);
  ASSERT_EQ(fs_->SyncAll(), 0);
  EXPECT_TRUE(RemoteFiles().empty());
}

TEST_F(BucketFsTest, ATruncateThroughAnOpenFileIsCommittedAtItsClose) {
  const Ino ino = WriteFile(kRootIno, "t", "abc");
  ASSERT_EQ(fs_->SyncAll(), 0);
  uint64_t fh = 0;
  bool keep = false;
  ASSERT_EQ(fs_->Open(ino, O_RDWR, &fh, &keep), 0);  // no O_TRUNC: the handle wrote nothing
  SetAttrRequest grow;
  grow.size = 10;
  grow.fh = fh;  // ftruncate(2)
  NodeAttr attr;
  ASSERT_EQ(fs_->SetAttr(ino, grow, caller_, &attr), 0);
  EXPECT_EQ(fs_->Flush(fh), 0);
  fs_->Release(fh);
  fs_.reset();  // an unmount commits what the closes queued
  EXPECT_EQ(RemoteFiles(), (std::map<std::string, uint64_t>{{"t", 10}}));
}

TEST_F(BucketFsTest, ConcurrentWritersToManyFilesAllLand) {
  constexpr int kThreads = 4, kFiles = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kFiles; ++i) {
        WriteFile(kRootIno, "t" + std::to_string(t) + "-" + std::to_string(i),
                  std::string(static_cast<size_t>(100 * (i + 1)), static_cast<char>('a' + t)));
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(fs_->SyncAll(), 0);
  const auto files = RemoteFiles();
  ASSERT_EQ(files.size(), static_cast<size_t>(kThreads * kFiles));
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kFiles; ++i) {
      EXPECT_EQ(files.at("t" + std::to_string(t) + "-" + std::to_string(i)),
                static_cast<uint64_t>(100 * (i + 1)));
    }
  }
}

TEST_F(BucketFsTest, MetadataIsStoredWithTheEntry) {
  const Ino ino = WriteFile(kRootIno, "m", "x");
  ASSERT_EQ(fs_->SyncAll(), 0);
  SetAttrRequest req;
  req.mode = 0600;
  req.uid = 42;
  req.mtime_ms = 1'700'000'000'123;
  NodeAttr attr;
  ASSERT_EQ(fs_->SetAttr(ino, req, caller_, &attr), 0);
  ASSERT_EQ(fs_->SetXattr(ino, "user.k", "v", 0), 0);
  EXPECT_EQ(fs_->SetXattr(ino, "user.k", "v", XATTR_CREATE), EEXIST);
  EXPECT_EQ(fs_->SetXattr(ino, "security.k", "v", 0), ENOTSUP);
  auto info = conn_->hub().PathsInfo("team/fs", std::vector<std::string>{"m"});
  ASSERT_TRUE(info.ok());
  ASSERT_EQ(info->size(), 1u);
  ASSERT_TRUE((*info)[0].posix.has_value());
  EXPECT_EQ((*info)[0].posix->mode & 07777, 0600u);
  EXPECT_EQ((*info)[0].posix->uid, 42u);
  EXPECT_EQ((*info)[0].mtime_ms, 1'700'000'000'123);
  EXPECT_EQ((*info)[0].posix->xattrs,
            (std::vector<std::pair<std::string, std::string>>{{"user.k", "v"}}));
}

TEST_F(BucketFsTest, APartlyRewrittenLargeFileIsCommittedAsAnEdit) {
  // A 12 MB base, committed; then, on a fresh mount, three scattered writes, a write past
  // the end, and a commit: the remote file must hash as the new bytes chunked whole, read
  // back as them, and only the windows around the writes may have been read.
  const auto base_bytes = testing::RandomBytes(12'000'000, 17);
  std::string expected(base_bytes.begin(), base_bytes.end());
  const Ino ino = WriteFile(kRootIno, "big.bin", expected);
  ASSERT_EQ(fs_->SyncAll(), 0);
  fs_.reset();
  CountingContent counting(*content_);
  fs_ = std::make_unique<BucketFs>(options_, *conn_, counting);
  Ino again = 0;
  NodeAttr attr;
  ASSERT_EQ(fs_->Lookup(kRootIno, "big.bin", &again, &attr), 0);
  uint64_t fh = 0;
  bool keep = false;
  ASSERT_EQ(fs_->Open(again, O_RDWR, &fh, &keep), 0);
  const std::vector<std::pair<uint64_t, size_t>> writes = {
      {1'000'000, 50'000}, {6'000'000, 70'000}, {9'500'000, 1}, {12'000'000, 30'000}};
  uint64_t seed = 100;
  for (const auto& [off, n] : writes) {
    const auto fresh = testing::RandomBytes(n, seed++);
    const std::string data(fresh.begin(), fresh.end());
    ASSERT_EQ(fs_->Write(fh, off, AsBytes(data)), 0);
    if (expected.size() < off + n) expected.resize(off + n);
    expected.replace(off, n, data);
  }
  ASSERT_EQ(fs_->Fsync(fh), 0);
  fs_->Release(fh);
  ASSERT_EQ(fs_->SyncAll(), 0);
  EXPECT_LT(counting.bytes(), 4u * (2u << 20)) << "more than the windows were read";

  ChunkHashStream full;
  full.Consume(AsBytes(expected));
  const Hash want = FileHash(full.Finish());
  fs_.reset();
  fs_ = std::make_unique<BucketFs>(options_, *conn_, *content_);
  ASSERT_EQ(fs_->Lookup(kRootIno, "big.bin", &again, &attr), 0);
  EXPECT_EQ(attr.size, expected.size());
  EXPECT_EQ(attr.hash, want);
  ASSERT_EQ(fs_->Open(again, O_RDONLY, &fh, &keep), 0);
  std::string got(expected.size(), '\0');
  size_t done = 0;
  while (done < got.size()) {
    size_t n = 0;
    ASSERT_EQ(fs_->Read(fh, done,
                        {reinterpret_cast<uint8_t*>(got.data()) + done,
                         std::min<size_t>(got.size() - done, 1 << 20)},
                        &n),
              0);
    if (n == 0) break;
    done += n;
  }
  fs_->Release(fh);
  EXPECT_EQ(done, expected.size());
  EXPECT_TRUE(got == expected);
  (void)ino;
}

TEST_F(BucketFsTest, AppendedFilesAreStreamedAndOtherChangesStopTheStream) {
  // Files written from empty in 1 MiB appends are uploaded while written
  // (mount/streaming_upload.h); an overwrite, a truncate, or a commit in the middle falls
  // back to uploading the staging file. Each must commit exactly its bytes.
  const auto random = testing::RandomBytes(24 << 20, 5);
  const std::string bytes(random.begin(), random.end());
  struct Case {
    std::string name;
    std::function<void(uint64_t fh, std::string& expected)> after_16_mib;
  };
  const std::vector<Case> cases = {
      {"plain", [](uint64_t, std::string&) {}},
      {"overwrite",
       [&](uint64_t fh, std::string& expected) {
         ASSERT_EQ(fs_->Write(fh, 5 << 20, AsBytes("changed")), 0);
         expected.replace(5 << 20, 7, "changed");
       }},
      {"truncate",
       [&](uint64_t fh, std::string& expected) {
         SetAttrRequest r;
         r.size = 10 << 20;
         r.fh = fh;
         NodeAttr attr;
         ASSERT_EQ(fs_->SetAttr(LookupIno("truncate"), r, caller_, &attr), 0);
         expected.resize(10 << 20);
       }},
      {"fsync", [&](uint64_t fh, std::string&) { ASSERT_EQ(fs_->Fsync(fh), 0); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Ino ino = 0;
    NodeAttr attr;
    uint64_t fh = 0;
    ASSERT_EQ(fs_->Create(kRootIno, c.name, 0644, O_WRONLY | O_CREAT, caller_, &ino, &attr, &fh),
              0);
    std::string expected;
    for (size_t off = 0; off < bytes.size(); off += 1 << 20) {
      if (off == 16u << 20) c.after_16_mib(fh, expected);
      const std::string piece = bytes.substr(off, 1 << 20);
      ASSERT_EQ(fs_->Write(fh, expected.size(), AsBytes(piece)), 0);
      expected += piece;
    }
    ASSERT_EQ(fs_->Fsync(fh), 0);
    fs_->Release(fh);
    ASSERT_EQ(fs_->SyncAll(), 0);
    ChunkHashStream full;
    full.Consume(AsBytes(expected));
    const Hash want = FileHash(full.Finish());
    ASSERT_EQ(fs_->Lookup(kRootIno, c.name, &ino, &attr), 0);
    EXPECT_EQ(attr.size, expected.size());
    EXPECT_EQ(attr.hash, want);
    EXPECT_EQ(RemoteFiles()[c.name], expected.size());
  }
}

}  // namespace
}  // namespace xet
