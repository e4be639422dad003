// client/bucket_transfer against a real `xetstore serve`: UploadToBucket's files and batch,
// LookupRemote's answers, and DownloadToFiles with a stale listing or too little room.
//
// A stale listing: the path was overwritten (or removed) between the listing and the
// download, as happens when another client writes the same path while `cp` or `sync`
// downloads it. Once the bucket's last entry for the old file is gone the bucket no longer
// sees that file, so its reconstruction is 404; the download must then take the path's
// current file (or report the path gone), not fail as "file not found" for a path that
// exists. Found by tests/hardening/load-test.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "client/bucket_transfer/bucket_download.h"
#include "client/bucket_transfer/bucket_upload.h"
#include "client/bucket_transfer/remote_connection.h"
#include "client/bucket_transfer/remote_lookup.h"
#include "client/hub/hub_client.h"
#include "client/hub/remote_path.h"
#include "support/cli_fixture.h"
#include "support/server_process.h"
#include "support/xet_fixtures.h"

namespace xet {
namespace {

namespace fs = std::filesystem;
using testing::ReadLocalFile;
using testing::WriteLocalFile;

class BucketTransferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::ServerProcess>(testing::MakeTempDir("bucket-transfer"));
    dir_ = testing::MakeTempDir("bucket-transfer-local");
    RemoteConnection conn(Settings());
    auto created = conn.hub().CreateBucket("team/data", /*is_private=*/true);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  RemoteSettings Settings() const {
    RemoteSettings s;
    s.endpoint = server_->url();
    s.token = server_->AdminToken();
    return s;  // no cache directory
  }

  // Uploads `content` as `path` of team/data (through the local file `name`); fails the test
  // if that fails.
  void Upload(const std::string& path, const std::string& content, const std::string& name) {
    const std::string local = dir_ + "/" + name;
    WriteLocalFile(local, content);
    RemoteConnection conn(Settings());
    const UploadJob jobs[] = {{local, path, content.size(), 0}};
    const auto uploaded = UploadToBucket(conn, "team/data", jobs, {});
    ASSERT_TRUE(uploaded.ok()) << uploaded.status().ToString();
  }

  // Removes `path` from team/data with a deleteFile batch; fails the test if that fails.
  void Remove(const std::string& path) {
    RemoteConnection conn(Settings());
    RemoteOp op;
    op.kind = RemoteOp::Kind::kDeleteFile;
    op.path = path;
    const auto outcome = conn.hub().Batch("team/data", {&op, 1});
    ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
    ASSERT_TRUE(outcome->failed.empty()) << outcome->failed.front().error;
  }

  // The entry of `path` as a listing shows it now.
  RemoteEntry Listed(const std::string& path) {
    RemoteConnection conn(Settings());
    RemoteEntry found;
    const Status st = conn.hub().ListTree("team/data", path, false, [&](const RemoteEntry& e) {
      if (e.path == path) found = e;
      return true;
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(found.path, path);
    return found;
  }

  Status Download(const RemoteEntry& stale, const std::string& dest) {
    RemoteConnection conn(Settings());
    const std::vector<DownloadJob> jobs = {{stale, dest, false, false}};
    return DownloadToFiles(conn, "team/data", jobs, nullptr);
  }

  Result<RemoteLookup> Lookup(const std::string& path) {
    RemoteConnection conn(Settings());
    RemotePath where;
    where.ns = "team";
    where.bucket = "data";
    where.path = path;
    return LookupRemote(conn.hub(), where);
  }

  std::unique_ptr<testing::ServerProcess> server_;
  std::string dir_;
};

TEST_F(BucketTransferTest, UploadRegistersTheFilesAndTheDeletesInOneBatch) {
  const std::string a = testing::RandomString(150'000, 11);
  const std::string b = testing::RandomString(70'000, 12);
  Upload("old.bin", testing::RandomString(1'000, 13), "old");
  WriteLocalFile(dir_ + "/a", a);
  WriteLocalFile(dir_ + "/b", b);
  const UploadJob jobs[] = {{dir_ + "/a", "d/a.bin", a.size(), 0},
                            {dir_ + "/b", "b.bin", b.size(), 0}};
  const std::string deletes[] = {"old.bin"};
  RemoteConnection conn(Settings());
  const auto uploaded = UploadToBucket(conn, "team/data", jobs, {}, deletes);
  ASSERT_TRUE(uploaded.ok()) << uploaded.status().ToString();

  // In the order of `jobs`, with the hashes the reference upload path computes.
  const auto want_a =
      testing::PrepareUpload({reinterpret_cast<const uint8_t*>(a.data()), a.size()});
  const auto want_b =
      testing::PrepareUpload({reinterpret_cast<const uint8_t*>(b.data()), b.size()});
  ASSERT_EQ(uploaded->size(), 2u);
  EXPECT_EQ((*uploaded)[0].file_hash, want_a.file_hash);
  EXPECT_EQ((*uploaded)[0].size, a.size());
  EXPECT_EQ((*uploaded)[1].file_hash, want_b.file_hash);
  EXPECT_EQ((*uploaded)[1].size, b.size());
  EXPECT_EQ(Listed("d/a.bin").xet_hash, want_a.file_hash);
  EXPECT_EQ(Listed("b.bin").xet_hash, want_b.file_hash);
  const auto old = Lookup("old.bin");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->kind, RemoteLookup::Kind::kMissing);
}

TEST_F(BucketTransferTest, UploadToAnUnknownBucketFailsBeforeReadingAnyFile) {
  RemoteConnection conn(Settings());
  // The local file does not exist: a failure to read it would be IoError, not NotFound.
  const UploadJob jobs[] = {{dir_ + "/no-such-file", "x.bin", 1, 0}};
  const auto uploaded = UploadToBucket(conn, "team/nobucket", jobs, {});
  EXPECT_EQ(uploaded.status().code(), Status::Code::kNotFound) << uploaded.status().ToString();
}

TEST_F(BucketTransferTest, LookupTellsFilesDirectoriesAndMissingPathsApart) {
  auto root = Lookup("");  // the root of an empty bucket is a directory
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(root->kind, RemoteLookup::Kind::kDirectory);

  const std::string content = testing::RandomString(5'000, 21);
  Upload("dir/f.bin", content, "f");
  const auto file = Lookup("dir/f.bin");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->kind, RemoteLookup::Kind::kFile);
  EXPECT_EQ(file->file.path, "dir/f.bin");
  EXPECT_EQ(file->file.size, content.size());
  const auto dir = Lookup("dir");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_EQ(dir->kind, RemoteLookup::Kind::kDirectory);
  const auto missing = Lookup("dir/g.bin");
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_EQ(missing->kind, RemoteLookup::Kind::kMissing);

  RemotePath where;
  where.ns = "team";
  where.bucket = "data";
  where.path = "dir/g.bin";
  const Status gone = NoSuchRemotePath(where);
  EXPECT_EQ(gone.code(), Status::Code::kNotFound);
  EXPECT_EQ(gone.message(),
            "hf://buckets/team/data/dir/g.bin: no such file or directory in the bucket");
}

TEST_F(BucketTransferTest, LookupInAnUnknownBucketIsNotFound) {
  RemoteConnection conn(Settings());
  RemotePath where;
  where.ns = "team";
  where.bucket = "nobucket";
  const auto found = LookupRemote(conn.hub(), where);
  EXPECT_EQ(found.status().code(), Status::Code::kNotFound) << found.status().ToString();
}

TEST_F(BucketTransferTest, OverwrittenAfterListingDownloadsTheCurrentFile) {
  const std::string v1 = testing::RandomString(300'000, 1);
  const std::string v2 = testing::RandomString(200'000, 2);
  Upload("x.bin", v1, "v1");
  const RemoteEntry stale = Listed("x.bin");
  Upload("x.bin", v2, "v2");  // the bucket's only entry for v1 is gone

  const std::string dest = testing::MakeTempDir("replaced-dst") + "/x.bin";
  const Status st = Download(stale, dest);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(ReadLocalFile(dest) == v2) << "want the current content of x.bin";
  EXPECT_FALSE(fs::exists(dest + ".xetpart"));
}

TEST_F(BucketTransferTest, RemovedAfterListingIsNotFoundNamingTheRemoval) {
  Upload("gone.bin", testing::RandomString(100'000, 3), "g");
  const RemoteEntry stale = Listed("gone.bin");
  Remove("gone.bin");

  const std::string dest = testing::MakeTempDir("removed-dst") + "/gone.bin";
  const Status st = Download(stale, dest);
  EXPECT_EQ(st.code(), Status::Code::kNotFound) << st.ToString();
  EXPECT_NE(st.ToString().find("removed from the bucket during the download"), std::string::npos)
      << st.ToString();
  EXPECT_FALSE(fs::exists(dest));
}

TEST_F(BucketTransferTest, TooLittleRoomFailsBeforeWritingAnything) {
  Upload("big.bin", testing::RandomString(10'000, 4), "big");
  RemoteEntry listed = Listed("big.bin");
  listed.size = uint64_t{1} << 62;  // 4 EiB: more than any test machine's disk

  const std::string dest = testing::MakeTempDir("full-dst") + "/big.bin";
  const Status st = Download(listed, dest);
  EXPECT_EQ(st.code(), Status::Code::kIoError) << st.ToString();
  EXPECT_NE(st.ToString().find(std::strerror(ENOSPC)), std::string::npos) << st.ToString();
  EXPECT_FALSE(fs::exists(dest));
  EXPECT_FALSE(fs::exists(dest + ".xetpart"));
}

}  // namespace
}  // namespace xet
