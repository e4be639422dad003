// A BucketFs over a real `xetstore serve` (no FUSE): a fresh server and bucket "team/fs"
// per test, the file system built as the mount builds it, metadata always revalidated.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "client/bucket_transfer/remote_connection.h"
#include "mount/bucket_fs.h"
#include "mount/range_reader_content.h"
#include "support/server_process.h"

namespace xet::testing {

class BucketFsFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(MakeTempDir("bucket-fs"));
    RemoteSettings remote;
    remote.endpoint = server_->url();
    remote.token = server_->AdminToken();
    conn_ = std::make_unique<RemoteConnection>(remote);
    ASSERT_TRUE(conn_->hub().CreateBucket("team/fs", true).ok());
    options_.remote = remote;
    options_.bucket_id = "team/fs";
    options_.staging_dir = MakeTempDir("bucket-fs-staging");
    options_.metadata_ttl_ms = 0;  // always revalidate: what the server says is what we see
    auto cas = conn_->OpenCas("team/fs", false);
    ASSERT_TRUE(cas.ok()) << cas.status().ToString();
    read_cas_ = std::move(*cas);
    content_ = std::make_unique<RangeReaderContent>(read_cas_->client(), RangeReaderOptions{});
    fs_ = std::make_unique<BucketFs>(options_, *conn_, *content_);
  }

  void TearDown() override {
    fs_.reset();
    content_.reset();
  }

  // The bucket's file entries, path -> entry, from the Hub API.
  std::map<std::string, RemoteEntry> RemoteEntries() {
    std::map<std::string, RemoteEntry> files;
    EXPECT_TRUE(conn_->hub()
                    .ListTree("team/fs", "", true,
                              [&](const RemoteEntry& e) {
                                if (!e.is_directory) files[e.path] = e;
                                return true;
                              })
                    .ok());
    return files;
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<RemoteConnection> conn_;
  std::unique_ptr<RemoteConnection::Cas> read_cas_;
  std::unique_ptr<RangeReaderContent> content_;
  MountOptions options_;
  std::unique_ptr<BucketFs> fs_;
  FsCaller caller_{0, 0};
};

}  // namespace xet::testing
