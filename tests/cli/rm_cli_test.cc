// `xetstore rm` against a real `xetstore serve`: files, --recursive, --dry-run, errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/cli_fixture.h"

namespace xet {
namespace {

using testing::CliServerTest;

class RmCliTest : public CliServerTest {
 protected:
  // team/data holds a.txt, keep.txt, dir/b.txt, dir/sub/c.txt, dirx.txt.
  void SetUp() override {
    CliServerTest::SetUp();
    CreateBucket("team/data");
    const std::string dir = LocalDir("rm-src");
    for (const char* path : {"a.txt", "keep.txt", "dir/b.txt", "dir/sub/c.txt", "dirx.txt"}) {
      testing::WriteLocalFile(dir + "/" + path, path);
    }
    const auto r = Run("cp -q -r " + dir + " hf://buckets/team/data");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::set<std::string> Paths() {
    const auto r = Run("ls -R --json hf://buckets/team/data");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      out.insert(nlohmann::json::parse(line)["path"].get<std::string>());
    }
    return out;
  }
};

TEST_F(RmCliTest, RemovesFiles) {
  const auto r = Run("rm hf://buckets/team/data/a.txt hf://buckets/team/data/dir/b.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "delete: hf://buckets/team/data/a.txt\n"
            "delete: hf://buckets/team/data/dir/b.txt\n");
  EXPECT_EQ(Paths(), (std::set<std::string>{"keep.txt", "dir/sub/c.txt", "dirx.txt"}));
}

TEST_F(RmCliTest, DirectoryNeedsRecursive) {
  auto r = Run("rm hf://buckets/team/data/dir");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is a directory: --recursive"), std::string::npos) << r.err;
  EXPECT_EQ(Paths().size(), 5u);

  r = Run("rm --recursive hf://buckets/team/data/dir");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "delete: hf://buckets/team/data/dir/b.txt\n"
            "delete: hf://buckets/team/data/dir/sub/c.txt\n");
  // "dirx.txt" shares the prefix's letters but is not inside the directory.
  EXPECT_EQ(Paths(), (std::set<std::string>{"a.txt", "keep.txt", "dirx.txt"}));
}

TEST_F(RmCliTest, DryRunRemovesNothing) {
  const auto r = Run("rm -r --dry-run hf://buckets/team/data/dir/");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "(dry run) delete: hf://buckets/team/data/dir/b.txt\n"
            "(dry run) delete: hf://buckets/team/data/dir/sub/c.txt\n");
  EXPECT_EQ(Paths().size(), 5u);
}

TEST_F(RmCliTest, RecursiveOnTheRootEmptiesTheBucket) {
  const auto r = Run("rm -r -q hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Paths().empty());
  EXPECT_EQ(Run("buckets info team/data").exit_code, 0);  // the bucket stays
}

TEST_F(RmCliTest, AMissingPathRemovesNothing) {
  auto r = Run("rm hf://buckets/team/data/a.txt hf://buckets/team/data/missing.txt");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err.rfind("xetstore: error: hf://buckets/team/data/missing.txt: no such file", 0), 0u)
      << r.err;
  EXPECT_EQ(Paths().size(), 5u);  // a.txt is still there
  r = Run("rm hf://buckets/team/nope/a.txt");
  EXPECT_EQ(r.exit_code, 3);
  r = Run("rm 'hf://buckets/team/data/a//b'");
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(RmCliTest, ReadOnlyTokenCannotRemove) {
  const std::string reader = server().CreateToken("read", "team/data");
  const auto r = RunAs(reader, "rm hf://buckets/team/data/a.txt");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(Paths().size(), 5u);
}

}  // namespace
}  // namespace xet
