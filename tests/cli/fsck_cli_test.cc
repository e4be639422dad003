// `xetstore fsck` against the data directory of a running `xetstore serve` whose object
// directory the test damages: exit codes, the problem lines, --deep, --repair, --json.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli_fixture.h"

namespace xet {
namespace {

using testing::CliServerTest;

class FsckCliTest : public CliServerTest {
 protected:
  void SetUp() override {
    CliServerTest::SetUp();
    CreateBucket("team/data");
    const std::string src = LocalDir("fsck-src");
    for (int i = 0; i < 2; ++i) {
      const std::string path = src + "/f" + std::to_string(i) + ".bin";
      testing::WriteLocalFile(path, testing::RandomString(200'000, 7 + i));
      const auto r =
          Run("cp -q " + path + " hf://buckets/team/data/f" + std::to_string(i) + ".bin");
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(server().data_dir() + "/objects/xorbs")) {
      if (e.is_regular_file()) xorb_files_.push_back(e.path().string());
    }
    ASSERT_EQ(xorb_files_.size(), 2u);
  }

  testing::CommandResult Fsck(const std::string& flags) {
    return testing::RunXetstoreEnv("", "fsck --data-dir " + server().data_dir() + " " + flags);
  }

  std::vector<std::string> xorb_files_;
};

TEST_F(FsckCliTest, ACleanStorePassesAndAMissingObjectFails) {
  auto r = Fsck("--deep");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("checked 2 xorbs, 2 shards, 2 files, 4 objects: 0 problems"),
            std::string::npos)
      << r.out;

  std::filesystem::remove(xorb_files_[0]);
  r = Fsck("--json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  ASSERT_EQ(j["problems"].size(), 1u) << r.out;
  EXPECT_EQ(j["problems"][0]["kind"], "xorb-object-missing");
  EXPECT_EQ(j["remaining"], 1);
  // A file needs it: --repair cannot help, and says so.
  r = Fsck("--repair");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("data lost"), std::string::npos) << r.out;
}

TEST_F(FsckCliTest, DeepFindsAFlippedByteAndRepairQuarantinesAStrayObject) {
  {  // Flip one byte in the middle of a stored xorb: same size, so only --deep sees it.
    std::fstream f(xorb_files_[1], std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(1000);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x20);
    f.seekp(1000);
    f.write(&c, 1);
  }
  // A stray object under a xorb key that does not verify.
  const std::string stray_hash(64, 'a');
  const std::string stray =
      server().data_dir() + "/objects/xorbs/" + stray_hash.substr(0, 2) + "/" + stray_hash;
  testing::WriteLocalFile(stray, "not a xorb");

  auto r = Fsck("");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("xorb-unindexed xorbs/aa/" + stray_hash), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("xorb-corrupt"), std::string::npos) << r.out;
  r = Fsck("--deep");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("xorb-corrupt"), std::string::npos) << r.out;

  r = Fsck("--deep --repair");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // the corrupt xorb's file is lost
  EXPECT_NE(r.out.find("quarantined"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 problems (1 repaired, 1 remain)"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(stray));
  EXPECT_TRUE(
      std::filesystem::exists(server().data_dir() + "/objects/quarantine/xorbs/aa/" + stray_hash));
}

}  // namespace
}  // namespace xet
