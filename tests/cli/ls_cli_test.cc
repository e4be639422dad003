// `xetstore ls` against a real `xetstore serve`: plain, -h, -R, --tree, --json, pagination,
// files, unknown paths and buckets.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "support/cli_fixture.h"

namespace xet {
namespace {

using testing::CliServerTest;

std::vector<std::string> Lines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<nlohmann::json> JsonLines(const std::string& out) {
  std::vector<nlohmann::json> items;
  for (const std::string& line : Lines(out)) items.push_back(nlohmann::json::parse(line));
  return items;
}

class LsCliTest : public CliServerTest {
 protected:
  // team/data holds: a.txt (5 B), big.bin (2048 B), dir/b.txt (1 B), dir/sub/c.txt (3 B).
  void SetUp() override {
    CliServerTest::SetUp();
    CreateBucket("team/data");
    dir_ = LocalDir("ls-src");
    testing::WriteLocalFile(dir_ + "/a.txt", "hello");
    testing::WriteLocalFile(dir_ + "/big.bin", std::string(2048, 'x'));
    testing::WriteLocalFile(dir_ + "/dir/b.txt", "b");
    testing::WriteLocalFile(dir_ + "/dir/sub/c.txt", "ccc");
    const auto r = Run("cp -q -r " + dir_ + " hf://buckets/team/data");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string dir_;
};

TEST_F(LsCliTest, PlainListsOneLevelWithDirectories) {
  const auto r = Run("ls hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  // "<size>  <date>  <path>", sizes right-aligned in 12 columns.
  EXPECT_EQ(lines[0].substr(0, 12), "           5") << lines[0];
  EXPECT_TRUE(lines[0].ends_with("  a.txt")) << lines[0];
  EXPECT_EQ(lines[1].substr(0, 12), "        2048") << lines[1];
  EXPECT_TRUE(lines[1].ends_with("  big.bin")) << lines[1];
  EXPECT_EQ(lines[2].substr(0, 12), "         DIR") << lines[2];
  EXPECT_TRUE(lines[2].ends_with("  dir/")) << lines[2];
  // The date is the local file's mtime, as YYYY-MM-DD HH:MM:SS.
  EXPECT_EQ(lines[0].size(), 12 + 2 + 19 + 2 + 5u) << lines[0];
}

TEST_F(LsCliTest, HumanSizes) {
  const auto r = Run("ls -h hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].substr(0, 12), "         5 B") << lines[0];
  EXPECT_EQ(lines[1].substr(0, 12), "    2.00 KiB") << lines[1];
}

TEST_F(LsCliTest, RecursiveListsEveryFileUnderThePrefix) {
  auto r = Run("ls -R hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> paths;
  for (const auto& line : Lines(r.out)) paths.push_back(line.substr(line.rfind("  ") + 2));
  EXPECT_EQ(paths, (std::vector<std::string>{"a.txt", "big.bin", "dir/b.txt", "dir/sub/c.txt"}));

  r = Run("ls hf://buckets/team/data/dir --recursive");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  paths.clear();
  for (const auto& line : Lines(r.out)) paths.push_back(line.substr(line.rfind("  ") + 2));
  EXPECT_EQ(paths, (std::vector<std::string>{"dir/b.txt", "dir/sub/c.txt"}));
}

TEST_F(LsCliTest, JsonIsOneObjectPerLine) {
  auto r = Run("ls --json hf://buckets/team/data/dir");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto items = JsonLines(r.out);
  ASSERT_EQ(items.size(), 2u) << r.out;
  EXPECT_EQ(items[0]["type"], "file");
  EXPECT_EQ(items[0]["path"], "dir/b.txt");
  EXPECT_EQ(items[0]["size"], 1);
  // The Xet hash of "b", computed by `xetstore hash` independently of the upload.
  const auto hashed = testing::RunXetstore("hash --json " + dir_ + "/dir/b.txt");
  EXPECT_EQ(items[0]["xetHash"], nlohmann::json::parse(hashed.out)["xet_hash"]);
  EXPECT_GT(items[0]["mtime"].get<int64_t>(), 0);
  EXPECT_EQ(items[1], (nlohmann::json{{"type", "directory"}, {"path", "dir/sub"}}));

  r = Run("ls --json -R hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonLines(r.out).size(), 4u);
}

TEST_F(LsCliTest, TreeDrawsTheHierarchy) {
  auto r = Run("ls --tree hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "hf://buckets/team/data\n"
            "├── a.txt  5\n"
            "├── big.bin  2048\n"
            "└── dir/\n"
            "    ├── b.txt  1\n"
            "    └── sub/\n"
            "        └── c.txt  3\n");
  r = Run("ls --tree -h hf://buckets/team/data/dir/");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "hf://buckets/team/data/dir/\n"
            "├── b.txt  1 B\n"
            "└── sub/\n"
            "    └── c.txt  3 B\n");
}

TEST_F(LsCliTest, AFilePathListsTheFile) {
  const auto r = Run("ls hf://buckets/team/data/dir/sub/c.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].ends_with("  dir/sub/c.txt")) << lines[0];
}

TEST_F(LsCliTest, UnknownPathAndBucketAreNotFound) {
  auto r = Run("ls hf://buckets/team/data/nope");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(
      r.err.rfind("xetstore: error: hf://buckets/team/data/nope: no such file or directory", 0), 0u)
      << r.err;
  r = Run("ls hf://buckets/team/missing");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err.rfind("xetstore: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("hint: "), std::string::npos) << r.err;
  // A private bucket asks an anonymous caller for a token; to a token without it in scope it
  // looks absent.
  r = RunAs("", "ls hf://buckets/team/data");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  r = RunAs(server().CreateToken("read", "other/bucket"), "ls hf://buckets/team/data");
  EXPECT_EQ(r.exit_code, 3) << r.err;
}

TEST_F(LsCliTest, BadPathsAreUsageErrors) {
  for (const std::string bad :
       {"hf://buckets/team", "hf://models/team/x", "hf://buckets/team/data/a//b",
        "hf://buckets/team/data/../x", "/local/path"}) {
    const auto r = Run("ls '" + bad + "'");
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(r.err.rfind("xetstore: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST_F(LsCliTest, EmptyBucketListsNothing) {
  CreateBucket("team/empty");
  const auto r = Run("ls hf://buckets/team/empty");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(CliServerTest, LsFollowsPagination) {
  // More files than one tree page (1,000 entries by default).
  CreateBucket("team/many");
  const std::string dir = LocalDir("ls-many");
  for (int i = 0; i < 1100; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "/f%04d", i);
    testing::WriteLocalFile(dir + name, std::to_string(i));
  }
  ASSERT_EQ(Run("cp -q -r " + dir + " hf://buckets/team/many/d").exit_code, 0);
  const auto r = Run("ls --json hf://buckets/team/many/d");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto items = JsonLines(r.out);
  ASSERT_EQ(items.size(), 1100u);
  EXPECT_EQ(items.front()["path"], "d/f0000");
  EXPECT_EQ(items.back()["path"], "d/f1099");
}

}  // namespace
}  // namespace xet
