// `xetstore migrate` from the data directory of a real server the CLI uploaded to, into a
// second data directory: a server started on the copy serves the same bytes; the refusals
// (the destination is the source, a state file of another migration, a damaged state file)
// are one line each and change nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_fixture.h"
#include "support/server_process.h"
#include "support/subprocess.h"

namespace xet {
namespace {

namespace fs = std::filesystem;
using testing::CliServerTest;

class MigrateCliTest : public CliServerTest {
 protected:
  testing::CommandResult Migrate(const std::string& args) {
    return testing::RunXetstore("migrate --data-dir " + server().data_dir() + " " + args);
  }
};

TEST_F(MigrateCliTest, ACopyServesTheSameBytesAndARerunCopiesNothing) {
  CreateBucket("team/a");
  const std::string dir = LocalDir("migrate");
  const std::string data = testing::RandomString(3 << 20, 7);
  testing::WriteLocalFile(dir + "/one.bin", data);
  ASSERT_EQ(Run("cp " + dir + "/one.bin hf://buckets/team/a/d/one.bin").exit_code, 0);
  const std::string copy = LocalDir("copy");
  auto r = Migrate("--to-data-dir " + copy + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json first = nlohmann::json::parse(r.out);
  EXPECT_EQ(first["files"], 1);
  EXPECT_EQ(first["buckets"], 1);
  EXPECT_GT(first["objects_copied"].get<int>(), 1);  // the xorbs and the shard
  EXPECT_TRUE(fs::exists(copy + "/migrate.state"));

  r = Migrate("--to-data-dir " + copy + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json again = nlohmann::json::parse(r.out);
  EXPECT_EQ(again["objects_copied"], 0);
  EXPECT_EQ(again["files"], 0);
  EXPECT_EQ(again["entries_written"], 0);

  // A server on the copy, with the source's tokens, serves the file.
  testing::ServerProcess copy_server(copy);
  const std::string out = LocalDir("out");
  const auto got =
      testing::RunXetstore("cp --endpoint " + copy_server.url() + " --token " + admin_token() +
                           " hf://buckets/team/a/d/one.bin " + out + "/one.bin");
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_EQ(testing::ReadLocalFile(out + "/one.bin"), data);
}

TEST_F(MigrateCliTest, RefusesToCopyADeploymentOntoItself) {
  const auto r = Migrate("--to-data-dir " + server().data_dir());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the destination index is the source's"), std::string::npos) << r.err;
}

TEST_F(MigrateCliTest, AStateFileOfAnotherMigrationOrDamagedIsRefused) {
  const std::string copy = LocalDir("copy");
  testing::WriteLocalFile(copy + "/migrate.state",
                          R"({"from":"/elsewhere + /x","to":"/y + /z","xorbs_after":5,)"
                          R"("files_after":2})");
  auto r = Migrate("--to-data-dir " + copy);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is for another migration"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(copy + "/index.sqlite"));  // refused before opening anything
  testing::WriteLocalFile(copy + "/migrate.state", "{\"from\": 3");
  r = Migrate("--to-data-dir " + copy);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a migrate state file"), std::string::npos) << r.err;
}

// The cut-over's second run copies from a source that serves reads only: downloads and
// listings work, every write is refused with one line, and nothing changes.
TEST_F(MigrateCliTest, AReadOnlyServerServesReadsAndRefusesEveryWrite) {
  CreateBucket("team/a");
  const std::string dir = LocalDir("ro");
  const std::string data = testing::RandomString(1 << 20, 9);
  testing::WriteLocalFile(dir + "/one.bin", data);
  ASSERT_EQ(Run("cp " + dir + "/one.bin hf://buckets/team/a/one.bin").exit_code, 0);
  testing::ServerProcess ro(server().data_dir(), {"--read-only"});
  const std::string as_admin =
      "--endpoint " + ro.url() + " --token " + admin_token() + " --retries 1 ";
  auto got = testing::RunXetstore(as_admin + "cp hf://buckets/team/a/one.bin " + dir + "/back.bin");
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_EQ(testing::ReadLocalFile(dir + "/back.bin"), data);
  EXPECT_EQ(testing::RunXetstore(as_admin + "ls hf://buckets/team/a").exit_code, 0);
  testing::WriteLocalFile(dir + "/two.bin", testing::RandomString(1 << 20, 10));
  for (const std::string& write :
       {"cp " + dir + "/two.bin hf://buckets/team/a/two.bin",
        std::string("rm hf://buckets/team/a/one.bin"), std::string("buckets create team/b")}) {
    const auto r = testing::RunXetstore(as_admin + write);
    EXPECT_NE(r.exit_code, 0) << write;
    EXPECT_NE(r.err.find("read-only (maintenance)"), std::string::npos) << write << ": " << r.err;
  }
  // Nothing changed: the writable server sees the bucket as it was.
  const auto files = RemoteFiles("team/a");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files.begin()->first, "one.bin");
  EXPECT_EQ(Run("buckets info team/b").exit_code, 3);
}

}  // namespace
}  // namespace xet
