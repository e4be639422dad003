// `serve --object-cache-mb`: a node with a local object cache serves downloads from copies
// after the first (what /metrics and the cache directory show), keeps the copies across a
// restart, and refuses a cache directory that overlaps its object store.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/cli_fixture.h"
#include "support/curl_client.h"
#include "support/server_process.h"
#include "support/subprocess.h"

namespace xet {
namespace {

namespace fs = std::filesystem;
using testing::CliServerTest;

// The value of the metric series `series` (name and labels as exposed), or -1.
long long MetricValue(const std::string& exposition, const std::string& series) {
  const std::string prefix = "\n" + series + " ";
  const size_t at = exposition.find(prefix);
  if (at == std::string::npos) return -1;
  return std::stoll(exposition.substr(at + prefix.size()));
}

size_t FilesUnder(const std::string& dir) {
  size_t n = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

class ObjectCacheCliTest : public CliServerTest {};

TEST_F(ObjectCacheCliTest, DownloadsAreServedFromCopiesAfterTheFirstAndSurviveARestart) {
  CreateBucket("team/c");
  const std::string dir = LocalDir("cache");
  const std::string data = testing::RandomString(6 << 20, 21);
  testing::WriteLocalFile(dir + "/one.bin", data);
  ASSERT_EQ(Run("cp " + dir + "/one.bin hf://buckets/team/c/one.bin").exit_code, 0);

  const std::string cache_dir = dir + "/node-cache";
  const std::vector<std::string> args = {
      "--object-cache-mb", "64", "--object-cache-dir", cache_dir, "--recent-xorb-cache-mb", "0"};
  auto download = [&](const testing::ServerProcess& node, const std::string& name) {
    const auto got =
        testing::RunXetstore("cp --endpoint " + node.url() + " --token " + admin_token() +
                             " hf://buckets/team/c/one.bin " + dir + "/" + name);
    ASSERT_EQ(got.exit_code, 0) << got.err;
    EXPECT_EQ(testing::ReadLocalFile(dir + "/" + name), data);
  };
  auto metrics = [&](const testing::ServerProcess& node) {
    const auto r = testing::Fetch("GET", node.url() + "/metrics");
    EXPECT_EQ(r.status, 200) << r.body;
    return "\n" + r.body;
  };
  {
    testing::ServerProcess node(server().data_dir(), args);
    download(node, "first.bin");
    const std::string m1 = metrics(node);
    const long long fills = MetricValue(m1, "xetstore_object_cache_fills_total");
    EXPECT_GE(fills, 1);
    EXPECT_EQ(MetricValue(m1, "xetstore_object_cache_entries"), fills);
    EXPECT_GE(MetricValue(m1, "xetstore_object_cache_bytes"), 6 << 20);  // the xorbs, at least
    EXPECT_EQ(FilesUnder(cache_dir), static_cast<size_t>(fills));

    download(node, "second.bin");
    const std::string m2 = metrics(node);
    EXPECT_EQ(MetricValue(m2, "xetstore_object_cache_fills_total"), fills);  // nothing new
    EXPECT_GT(MetricValue(m2, "xetstore_object_cache_reads_total{result=\"hit\"}"),
              MetricValue(m1, "xetstore_object_cache_reads_total{result=\"hit\"}"));
    EXPECT_EQ(MetricValue(m2, "xetstore_object_cache_reads_total{result=\"bypass\"}"), 0);
    EXPECT_EQ(node.Terminate(), 0);
  }
  // Restarted: the copies are found again and serve without a new fill.
  testing::ServerProcess node(server().data_dir(), args);
  EXPECT_NE(node.Log().find("xetstore: object cache " + cache_dir + ": "), std::string::npos)
      << node.Log();
  download(node, "third.bin");
  EXPECT_EQ(MetricValue(metrics(node), "xetstore_object_cache_fills_total"), 0);
}

TEST_F(ObjectCacheCliTest, ACacheDirectoryInsideTheObjectStoreIsRefused) {
  const std::string data_dir = LocalDir("overlap");
  const auto r = testing::RunXetstore("serve --data-dir " + data_dir +
                                      " --listen 127.0.0.1:0 --object-cache-mb 16 "
                                      "--object-cache-dir " +
                                      data_dir + "/objects/cache");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("overlaps the object store's directory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(data_dir + "/objects/cache"));
}

}  // namespace
}  // namespace xet
