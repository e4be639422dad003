// `xetstore stats` on the data directory of a real server the CLI uploaded to: the figures
// checked against what was uploaded and against the stored objects on disk.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_fixture.h"
#include "support/subprocess.h"

namespace xet {
namespace {

namespace fs = std::filesystem;
using testing::CliServerTest;

class StatsCliTest : public CliServerTest {
 protected:
  nlohmann::json Stats(const std::string& extra = "") {
    const auto r =
        testing::RunXetstore("stats --json --data-dir " + server().data_dir() + " " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
  // The bytes and number of the xorb objects in the data directory.
  std::pair<uint64_t, uint64_t> XorbsOnDisk() {
    uint64_t bytes = 0, count = 0;
    const fs::path dir = fs::path(server().data_dir()) / "objects" / "xorbs";
    if (!fs::exists(dir)) return {0, 0};
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file() || e.path().filename().string().starts_with(".")) continue;
      bytes += e.file_size();
      count += 1;
    }
    return {bytes, count};
  }
};

TEST_F(StatsCliTest, FiguresMatchTheUploadsAndTheStoredObjects) {
  CreateBucket("team/a");
  CreateBucket("team/b");
  CreateBucket("team/empty");
  const std::string dir = LocalDir("stats");
  testing::WriteLocalFile(dir + "/one.bin", testing::RandomString(3 << 20, 1));
  testing::WriteLocalFile(dir + "/two.bin", testing::RandomString(1 << 20, 2));
  // team/a: one.bin twice and two.bin; team/b: one.bin again (deduplicated: no new xorb).
  for (const std::string& cmd : {"cp " + dir + "/one.bin hf://buckets/team/a/x/one.bin",
                                 "cp " + dir + "/one.bin hf://buckets/team/a/y/one-again.bin",
                                 "cp " + dir + "/two.bin hf://buckets/team/a/two.bin",
                                 "cp " + dir + "/one.bin hf://buckets/team/b/one.bin"}) {
    ASSERT_EQ(Run(cmd).exit_code, 0) << cmd;
  }
  const auto [disk_bytes, disk_xorbs] = XorbsOnDisk();
  ASSERT_GT(disk_xorbs, 0u);

  const nlohmann::json j = Stats();
  const nlohmann::json& total = j["total"];
  EXPECT_EQ(total["files"], 4);
  EXPECT_EQ(total["logical_bytes"], (3u << 20) * 3 + (1u << 20));
  EXPECT_EQ(total["stored_bytes"], disk_bytes);
  EXPECT_EQ(total["xorbs"], disk_xorbs);
  EXPECT_NEAR(total["dedup_ratio"].get<double>(),
              static_cast<double>((3u << 20) * 3 + (1u << 20)) / static_cast<double>(disk_bytes),
              1e-9);

  ASSERT_EQ(j["buckets"].size(), 3u);
  const nlohmann::json& a = j["buckets"][0];
  const nlohmann::json& b = j["buckets"][1];
  const nlohmann::json& empty = j["buckets"][2];
  EXPECT_EQ(a["bucket"], "team/a");
  EXPECT_EQ(a["files"], 3);
  EXPECT_EQ(a["distinct_files"], 2);
  EXPECT_EQ(a["logical_bytes"], (3u << 20) * 2 + (1u << 20));
  EXPECT_EQ(a["stored_bytes"], disk_bytes);  // team/a holds every xorb
  EXPECT_EQ(b["bucket"], "team/b");
  EXPECT_EQ(b["files"], 1);
  EXPECT_GT(b["stored_bytes"].get<uint64_t>(), 3u << 20);  // random data: no compression
  EXPECT_LT(b["stored_bytes"].get<uint64_t>(), disk_bytes);
  EXPECT_EQ(empty["bucket"], "team/empty");
  EXPECT_EQ(empty["files"], 0);
  EXPECT_EQ(empty["stored_bytes"], 0);
  EXPECT_EQ(empty["dedup_ratio"], 0);

  // One bucket: its row alone; the totals still cover everything.
  const nlohmann::json only = Stats("--bucket team/b");
  ASSERT_EQ(only["buckets"].size(), 1u);
  EXPECT_EQ(only["buckets"][0], b);
  EXPECT_EQ(only["total"], total);

  // The table: a header, one row per bucket, the total.
  const auto table = testing::RunXetstore("stats --data-dir " + server().data_dir());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.rfind("BUCKET", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("team/a"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("(total)"), std::string::npos) << table.out;
}

TEST_F(StatsCliTest, AnUnknownBucketIsOneLineAndExitThree) {
  const auto r =
      testing::RunXetstore("stats --data-dir " + server().data_dir() + " --bucket team/nope");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.rfind("xetstore: error: bucket team/nope not found", 0), 0u) << r.err;
}

}  // namespace
}  // namespace xet
