// BucketFs's special files (mknod: FIFOs, sockets, device nodes) against a real
// `xetstore serve`, without FUSE: what a mount reports, what the bucket holds afterwards
// (through the Hub API), and what a second mount of the bucket sees. (Through a real FUSE
// mount: tests/mount/run, posix_conformance.py's mknod cases.)
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "mount/bucket_fs_fixture.h"

namespace xet {
namespace {

using BucketFsSpecialFilesTest = testing::BucketFsFixture;

TEST_F(BucketFsSpecialFilesTest, EachTypeIsOneEntryWithItsModeAndDevice) {
  struct Case {
    const char* name;
    uint32_t mode;
    uint64_t rdev;  // as the kernel passes it
    NodeKind kind;
    uint32_t want_rdev;  // what is reported and stored
  };
  const Case cases[] = {
      {"fifo", S_IFIFO | 0640, 0, NodeKind::kFifo, 0},
      {"fifo-dev", S_IFIFO | 0600, makedev(1, 3), NodeKind::kFifo, 0},  // ignored, as ext4
      {"sock", S_IFSOCK | 0755, 0, NodeKind::kSocket, 0},
      {"null", S_IFCHR | 0666, makedev(1, 3), NodeKind::kCharDevice, 0x103},
      {"sda1", S_IFBLK | 0660, makedev(8, 1), NodeKind::kBlockDevice, 0x801},
      {"big", S_IFBLK | 0600, makedev(4095, 1048575), NodeKind::kBlockDevice, 0xFFFFFFFFu},
  };
  for (const Case& c : cases) {
    Ino ino = 0;
    NodeAttr attr;
    ASSERT_EQ(fs_->MkNod(kRootIno, c.name, c.mode, c.rdev, caller_, &ino, &attr), 0) << c.name;
    EXPECT_EQ(attr.kind, c.kind) << c.name;
    EXPECT_EQ(TypeBits(attr.kind) | attr.mode, c.mode) << c.name;
    EXPECT_EQ(attr.rdev, c.want_rdev) << c.name;
    EXPECT_EQ(attr.size, 0u) << c.name;
    NodeAttr again;
    ASSERT_EQ(fs_->GetAttr(ino, &again), 0);
    EXPECT_EQ(again.kind, c.kind);
    EXPECT_EQ(again.rdev, c.want_rdev);
  }
  // Applied before the call returned: on the server, as the empty file with its posix.
  const auto files = RemoteEntries();
  ASSERT_EQ(files.size(), std::size(cases));
  for (const Case& c : cases) {
    const RemoteEntry& e = files.at(c.name);
    EXPECT_EQ(e.size, 0u) << c.name;
    EXPECT_TRUE(e.xet_hash.IsZero()) << c.name;
    ASSERT_TRUE(e.posix.has_value()) << c.name;
    EXPECT_EQ(e.posix->mode, c.mode) << c.name;
    EXPECT_EQ(e.posix->rdev, c.want_rdev) << c.name;
  }
  // Another mount of the bucket sees them the same.
  MountOptions second = options_;
  second.staging_dir = testing::MakeTempDir("bucket-fs-special-second");
  BucketFs other(second, *conn_, *content_);
  for (const Case& c : cases) {
    Ino ino = 0;
    NodeAttr attr;
    ASSERT_EQ(other.Lookup(kRootIno, c.name, &ino, &attr), 0) << c.name;
    EXPECT_EQ(attr.kind, c.kind) << c.name;
    EXPECT_EQ(TypeBits(attr.kind) | attr.mode, c.mode) << c.name;
    EXPECT_EQ(attr.rdev, c.want_rdev) << c.name;
  }
}

TEST_F(BucketFsSpecialFilesTest, NamesAndRefusalsAsForEveryNewEntry) {
  Ino ino = 0, dir = 0;
  NodeAttr attr;
  ASSERT_EQ(fs_->MkNod(kRootIno, "p", S_IFIFO | 0644, 0, caller_, &ino, &attr), 0);
  EXPECT_EQ(fs_->MkNod(kRootIno, "p", S_IFIFO | 0644, 0, caller_, &ino, &attr), EEXIST);
  EXPECT_EQ(fs_->MkNod(ino, "x", S_IFIFO | 0644, 0, caller_, &ino, &attr), ENOTDIR);
  EXPECT_EQ(fs_->MkNod(kRootIno, std::string(256, 'n'), S_IFIFO | 0644, 0, caller_, &ino, &attr),
            ENAMETOOLONG);
  EXPECT_EQ(fs_->MkNod(kRootIno, "bad", 0030644, 0, caller_, &ino, &attr), EINVAL);
  EXPECT_EQ(fs_->MkNod(kRootIno, "d", S_IFDIR | 0755, 0, caller_, &ino, &attr), EINVAL);
  EXPECT_EQ(fs_->MkNod(kRootIno, "l", S_IFLNK | 0777, 0, caller_, &ino, &attr), EINVAL);
  EXPECT_EQ(fs_->MkNod(kRootIno, "c", S_IFCHR | 0644, uint64_t{1} << 32, caller_, &ino, &attr),
            EINVAL);
  // In a set-group-ID directory a new node takes the directory's group.
  ASSERT_EQ(fs_->MkDir(kRootIno, "g", 02775, FsCaller{0, 42}, &dir, &attr), 0);
  ASSERT_EQ(fs_->MkNod(dir, "s", S_IFSOCK | 0700, 0, FsCaller{7, 8}, &ino, &attr), 0);
  EXPECT_EQ(attr.uid, 7u);
  EXPECT_EQ(attr.gid, 42u);
  // Its directory's mtime moved with it, in the same batch.
  NodeAttr g;
  ASSERT_EQ(fs_->GetAttr(dir, &g), 0);
  EXPECT_EQ(g.mtime_ms, attr.mtime_ms);
  EXPECT_EQ(RemoteEntries().count("g/s"), 1u);
  // The kernel opens these itself; the file system never serves their content.
  uint64_t fh = 0;
  bool keep = false;
  EXPECT_EQ(fs_->Open(ino, O_RDONLY, &fh, &keep), ENXIO);
  // A regular file by mknod: created empty, committed in the background.
  ASSERT_EQ(fs_->MkNod(kRootIno, "r", S_IFREG | 0600, 0, caller_, &ino, &attr), 0);
  EXPECT_EQ(attr.kind, NodeKind::kFile);
  EXPECT_EQ(attr.mode, 0600u);
  EXPECT_EQ(fs_->MkNod(kRootIno, "r", S_IFREG | 0600, 0, caller_, &ino, &attr), EEXIST);
  ASSERT_EQ(fs_->SyncAll(), 0);
  const auto files = RemoteEntries();
  ASSERT_EQ(files.count("r"), 1u);
  EXPECT_EQ(files.at("r").posix->mode, S_IFREG | 0600u);
  // A read-only mount refuses.
  MountOptions read_only = options_;
  read_only.read_only = true;
  read_only.staging_dir = testing::MakeTempDir("bucket-fs-special-ro");
  BucketFs ro(read_only, *conn_, *content_);
  EXPECT_EQ(ro.MkNod(kRootIno, "q", S_IFIFO | 0644, 0, caller_, &ino, &attr), EROFS);
}

TEST_F(BucketFsSpecialFilesTest, ChmodChownTimesRenameAndUnlinkWorkOnThem) {
  Ino ino = 0, dir = 0;
  NodeAttr attr;
  ASSERT_EQ(fs_->MkNod(kRootIno, "c", S_IFCHR | 0600, makedev(5, 1), caller_, &ino, &attr), 0);
  SetAttrRequest req;
  req.mode = 0640;
  req.uid = 1000;
  req.gid = 100;
  req.mtime_ms = 1'000'000;
  ASSERT_EQ(fs_->SetAttr(ino, req, caller_, &attr), 0);
  EXPECT_EQ(attr.kind, NodeKind::kCharDevice);
  EXPECT_EQ(attr.mode, 0640u);
  EXPECT_EQ(attr.rdev, 0x501u);
  auto files = RemoteEntries();
  ASSERT_TRUE(files.at("c").posix.has_value());
  EXPECT_EQ(files.at("c").posix->mode, S_IFCHR | 0640u);
  EXPECT_EQ(files.at("c").posix->uid, 1000u);
  EXPECT_EQ(files.at("c").posix->gid, 100u);
  EXPECT_EQ(files.at("c").posix->rdev, 0x501u);
  EXPECT_EQ(files.at("c").mtime_ms, 1'000'000);
  // truncate is for regular files only.
  SetAttrRequest trunc;
  trunc.size = 0;
  EXPECT_EQ(fs_->SetAttr(ino, trunc, caller_, &attr), EINVAL);
  // Renamed (over another special file) and removed as any entry.
  ASSERT_EQ(fs_->MkDir(kRootIno, "d", 0755, caller_, &dir, &attr), 0);
  ASSERT_EQ(fs_->MkNod(dir, "p", S_IFIFO | 0644, 0, caller_, &ino, &attr), 0);
  ASSERT_EQ(fs_->Rename(kRootIno, "c", dir, "p", 0), 0);
  files = RemoteEntries();
  EXPECT_EQ(files.count("c"), 0u);
  ASSERT_EQ(files.count("d/p"), 1u);
  EXPECT_EQ(files.at("d/p").posix->mode, S_IFCHR | 0640u);
  EXPECT_EQ(fs_->RmDir(kRootIno, "d"), ENOTEMPTY);
  ASSERT_EQ(fs_->Unlink(dir, "p"), 0);
  EXPECT_TRUE(RemoteEntries().empty());
  EXPECT_EQ(fs_->Lookup(dir, "p", &ino, &attr), ENOENT);
  EXPECT_EQ(fs_->RmDir(kRootIno, "d"), 0);
}

// The server stores no ctime: a chmod's ctime outlives the listing refreshes that follow
// (another batch moved the bucket's generation on), as long as the entry is unchanged.
TEST_F(BucketFsSpecialFilesTest, ChangeTimeSurvivesAListingRefresh) {
  Ino ino = 0;
  NodeAttr attr;
  ASSERT_EQ(fs_->MkNod(kRootIno, "p", S_IFIFO | 0644, 0, caller_, &ino, &attr), 0);
  const int64_t made = attr.mtime_ms;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  SetAttrRequest req;
  req.mode = 0600;
  ASSERT_EQ(fs_->SetAttr(ino, req, caller_, &attr), 0);
  const int64_t changed = attr.ctime_ms;
  ASSERT_GT(changed, made);
  Ino other = 0;
  ASSERT_EQ(fs_->MkNod(kRootIno, "q", S_IFIFO | 0644, 0, caller_, &other, &attr), 0);
  ASSERT_EQ(fs_->GetAttr(ino, &attr), 0);  // TTL 0: listed again from the server
  EXPECT_EQ(attr.mode, 0600u);
  EXPECT_EQ(attr.mtime_ms, made);
  EXPECT_EQ(attr.ctime_ms, changed);
  // Changed by another client (a new mtime): the ctime is the server's, the new mtime.
  RemoteOp op;
  op.kind = RemoteOp::Kind::kSetMetadata;
  op.path = "p";
  op.mtime_ms = made - 1000;
  op.posix = RemotePosix{S_IFIFO | 0640, 0, 0, 0, "", {}};
  const RemoteOp ops[] = {op};
  auto outcome = conn_->hub().Batch("team/fs", ops);
  ASSERT_TRUE(outcome.ok() && outcome->failed.empty());
  ASSERT_EQ(fs_->GetAttr(ino, &attr), 0);
  EXPECT_EQ(attr.mode, 0640u);
  EXPECT_EQ(attr.mtime_ms, made - 1000);
  EXPECT_EQ(attr.ctime_ms, made - 1000);
}

// A FIFO may be open (in the kernel, unseen by the mount) when its name goes: fstat still
// answers, with st_nlink 0, until the kernel forgets the inode.
TEST_F(BucketFsSpecialFilesTest, AnUnlinkedSpecialFileKeepsItsAttributesUntilForgotten) {
  Ino ino = 0, looked = 0;
  NodeAttr attr;
  ASSERT_EQ(fs_->MkNod(kRootIno, "p", S_IFIFO | 0640, 0, caller_, &ino, &attr), 0);
  ASSERT_EQ(fs_->Lookup(kRootIno, "p", &looked, &attr), 0);  // the kernel's second lookup
  ASSERT_EQ(looked, ino);
  ASSERT_EQ(fs_->Unlink(kRootIno, "p"), 0);
  ASSERT_EQ(fs_->GetAttr(ino, &attr), 0);
  EXPECT_EQ(attr.kind, NodeKind::kFifo);
  EXPECT_EQ(attr.mode, 0640u);
  EXPECT_TRUE(attr.unlinked);
  // fchmod through the open FIFO: kept with it, not sent anywhere.
  SetAttrRequest req;
  req.mode = 0600;
  ASSERT_EQ(fs_->SetAttr(ino, req, caller_, &attr), 0);
  EXPECT_EQ(attr.mode, 0600u);
  EXPECT_TRUE(RemoteEntries().empty());
  fs_->Forget(ino, 1);
  EXPECT_EQ(fs_->GetAttr(ino, &attr), 0);  // one lookup left
  fs_->Forget(ino, 1);
  EXPECT_EQ(fs_->GetAttr(ino, &attr), ENOENT);
  // A new node of the same name is another inode.
  Ino again = 0;
  ASSERT_EQ(fs_->MkNod(kRootIno, "p", S_IFSOCK | 0644, 0, caller_, &again, &attr), 0);
  EXPECT_NE(again, ino);
  ASSERT_EQ(fs_->GetAttr(again, &attr), 0);
  EXPECT_EQ(attr.kind, NodeKind::kSocket);
  EXPECT_FALSE(attr.unlinked);
}

}  // namespace
}  // namespace xet
