// DownloadToFiles with a stale listing, against a real `xetstore serve`: the path was
// overwritten (or removed) between the listing and the download, as happens when another
// client writes the same path while `cp` or `sync` downloads it. Once the bucket's last
// entry for the old file is gone the bucket no longer sees that file, so its reconstruction
// is 404; the download must then take the path's current file (or report the path gone),
// not fail as "file not found" for a path that exists. Found by tests/hardening/load-test.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/download_files.h"
#include "cli/remote_options.h"
#include "client/hub/hub_client.h"
#include "support/cli_fixture.h"

namespace xet {
namespace {

namespace fs = std::filesystem;
using testing::CliServerTest;
using testing::ReadLocalFile;
using testing::WriteLocalFile;

class DownloadReplacedCliTest : public CliServerTest {
 protected:
  void SetUp() override {
    CliServerTest::SetUp();
    CreateBucket("team/data");
    dir_ = LocalDir("replaced");
  }

  // Uploads `content` as `path` of team/data; fails the test if that fails.
  void Upload(const std::string& path, const std::string& content, const std::string& name) {
    const std::string local = dir_ + "/" + name;
    WriteLocalFile(local, content);
    const auto r = Run("cp -q " + local + " hf://buckets/team/data/" + path);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // The entry of `path` as a listing shows it now.
  RemoteEntry Listed(const std::string& path) {
    cli::RemoteConnection conn(Options());
    RemoteEntry found;
    const Status st = conn.hub().ListTree("team/data", path, false, [&](const RemoteEntry& e) {
      if (e.path == path) found = e;
      return true;
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(found.path, path);
    return found;
  }

  cli::RemoteOptions Options() const {
    cli::RemoteOptions o;
    o.endpoint = url();
    o.token = admin_token();
    o.no_cache = true;
    return o;
  }

  Status Download(const RemoteEntry& stale, const std::string& dest) {
    cli::RemoteConnection conn(Options());
    const std::vector<cli::DownloadJob> jobs = {{stale, dest, false, false}};
    return cli::DownloadToFiles(conn, "team/data", jobs, nullptr);
  }

  std::string dir_;
};

TEST_F(DownloadReplacedCliTest, OverwrittenAfterListingDownloadsTheCurrentFile) {
  const std::string v1 = testing::RandomString(300'000, 1);
  const std::string v2 = testing::RandomString(200'000, 2);
  Upload("x.bin", v1, "v1");
  const RemoteEntry stale = Listed("x.bin");
  Upload("x.bin", v2, "v2");  // the bucket's only entry for v1 is gone

  const std::string dest = LocalDir("replaced-dst") + "/x.bin";
  const Status st = Download(stale, dest);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(ReadLocalFile(dest) == v2) << "want the current content of x.bin";
  EXPECT_FALSE(fs::exists(dest + ".xetpart"));
}

TEST_F(DownloadReplacedCliTest, RemovedAfterListingIsNotFoundNamingTheRemoval) {
  Upload("gone.bin", testing::RandomString(100'000, 3), "g");
  const RemoteEntry stale = Listed("gone.bin");
  ASSERT_EQ(Run("rm hf://buckets/team/data/gone.bin").exit_code, 0);

  const std::string dest = LocalDir("removed-dst") + "/gone.bin";
  const Status st = Download(stale, dest);
  EXPECT_EQ(st.code(), Status::Code::kNotFound) << st.ToString();
  EXPECT_NE(st.ToString().find("removed from the bucket during the download"), std::string::npos)
      << st.ToString();
  EXPECT_FALSE(fs::exists(dest));
}

}  // namespace
}  // namespace xet
