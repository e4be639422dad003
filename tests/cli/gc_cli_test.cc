// `xetstore gc` against the data directory of a running `xetstore serve` (SQLite index,
// local objects): what it frees, what it keeps, the dry run, and its errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_fixture.h"
#include "support/temp_dir.h"

namespace xet {
namespace {

using testing::CliServerTest;

// Regular files under `dir` (recursively); 0 if it does not exist.
size_t CountFiles(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file()) ++n;
  }
  return n;
}

class GcCliTest : public CliServerTest {
 protected:
  // Uploads six files of distinct random content to team/data, one `cp` each (so each has
  // its own xorb and shard).
  void SetUp() override {
    CliServerTest::SetUp();
    CreateBucket("team/data");
    src_ = LocalDir("gc-src");
    for (int i = 0; i < 6; ++i) {
      const std::string path = src_ + "/f" + std::to_string(i) + ".bin";
      testing::WriteLocalFile(path, testing::RandomString(300'000, 100 + i));
      const auto r =
          Run("cp -q " + path + " hf://buckets/team/data/f" + std::to_string(i) + ".bin");
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }

  nlohmann::json Gc(const std::string& flags) {
    const auto r =
        testing::RunXetstoreEnv("", "gc --data-dir " + server().data_dir() + " --json " + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_TRUE(j.is_object()) << r.out;
    return j;
  }

  std::string src_;
};

TEST_F(GcCliTest, FreesTheDeletedHalfAndKeepsTheRest) {
  const std::string objects = server().data_dir() + "/objects";
  const size_t xorb_objects = CountFiles(objects + "/xorbs");
  ASSERT_EQ(xorb_objects, 6u);
  for (int i : {1, 3, 5}) {
    const auto r = Run("rm hf://buckets/team/data/f" + std::to_string(i) + ".bin");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // Within the grace period nothing goes.
  nlohmann::json j = Gc("--grace 1h");
  EXPECT_EQ(j["xorbs"]["freed"], 0);
  EXPECT_EQ(j["files"]["freed"], 0);

  j = Gc("--grace 0 --dry-run");
  EXPECT_EQ(j["dry_run"], true);
  EXPECT_EQ(j["files"]["freed"], 3);
  EXPECT_EQ(j["xorbs"]["freed"], 3);
  EXPECT_EQ(j["shards"]["freed"], 3);
  EXPECT_GT(j["xorbs"]["bytes_freed"].get<uint64_t>(), 3u * 250'000);
  EXPECT_EQ(CountFiles(objects + "/xorbs"), 6u);  // the dry run deleted nothing
  EXPECT_EQ(CountFiles(objects + "/shards"), 6u);

  const nlohmann::json real = Gc("--grace 0");
  EXPECT_EQ(real["dry_run"], false);
  EXPECT_EQ(real["files"]["freed"], 3);
  EXPECT_EQ(real["xorbs"]["freed"], 3);
  EXPECT_EQ(real["xorbs"]["bytes_freed"], j["xorbs"]["bytes_freed"]);
  EXPECT_EQ(real["shards"]["freed"], 3);
  EXPECT_EQ(CountFiles(objects + "/xorbs"), 3u);
  EXPECT_EQ(CountFiles(objects + "/shards"), 3u);

  // What stayed downloads intact; what went can be uploaded again (the client's caches
  // still name the deleted xorbs), and then downloads intact too.
  const std::string out = LocalDir("gc-out");
  for (int i = 0; i < 6; i += 2) {
    const std::string name = "f" + std::to_string(i) + ".bin";
    const auto r = Run("cp -q hf://buckets/team/data/" + name + " " + out + "/" + name);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(testing::ReadLocalFile(out + "/" + name), testing::ReadLocalFile(src_ + "/" + name));
  }
  auto r = Run("cp -q " + src_ + "/f1.bin hf://buckets/team/data/again.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run("cp -q hf://buckets/team/data/again.bin " + out + "/again.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing::ReadLocalFile(out + "/again.bin"), testing::ReadLocalFile(src_ + "/f1.bin"));
}

TEST_F(GcCliTest, HumanReportNamesCountsAndBytes) {
  ASSERT_EQ(Run("rm hf://buckets/team/data/f0.bin").exit_code, 0);
  const auto r =
      testing::RunXetstoreEnv("", "gc --dry-run --grace 0 --data-dir " + server().data_dir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dry run (nothing deleted)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("xorbs:  would free 1 of 6 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("files:  would free 1 of 6 records"), std::string::npos) << r.out;
}

TEST(GcCliErrors, BadGraceIsOneClearLine) {
  testing::TempDir dir("xet-gc-cli");
  for (const char* grace : {"abc", "-5m", "5x", "1.5h", "10", "''", "99999999999999d"}) {
    const auto r = testing::RunXetstoreEnv(
        "", std::string("gc --data-dir ") + dir.path() + " --grace " + grace);
    EXPECT_EQ(r.exit_code, 2) << grace << ": " << r.err;
    EXPECT_EQ(r.err.find("xetstore: error: --grace: invalid duration"), 0u)
        << grace << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << grace << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace xet
