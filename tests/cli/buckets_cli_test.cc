// `xetstore buckets create | list | info | delete | move` against a real `xetstore serve`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/cli_fixture.h"

namespace xet {
namespace {

using testing::CliServerTest;

// The "id" of every JSON line of `out`.
std::set<std::string> JsonIds(const std::string& out) {
  std::set<std::string> ids;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    ids.insert(nlohmann::json::parse(line).at("id").get<std::string>());
  }
  return ids;
}

class BucketsCliTest : public CliServerTest {};

TEST_F(BucketsCliTest, CreateIsPrivateByDefaultAndPublicOnRequest) {
  auto r = Run("buckets create team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "created private bucket hf://buckets/team/data\n");
  r = Run("buckets create hf://buckets/team/open --public");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "created public bucket hf://buckets/team/open\n");

  // Anonymous callers see the public bucket only.
  r = RunAs("", "buckets info team/open --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["private"], false);
  // A private bucket asks an anonymous caller for a token (401), as an absent one does.
  r = RunAs("", "buckets info team/data");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("hint: pass a valid token"), std::string::npos) << r.err;

  r = Run("buckets info team/data --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["id"], "team/data");
  EXPECT_EQ(j["private"], true);
  EXPECT_EQ(j["totalFiles"], 0);
  EXPECT_EQ(j["size"], 0);
}

TEST_F(BucketsCliTest, PrivateAndPublicExcludeEachOther) {
  const auto r = Run("buckets create team/x --private --public");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Run("buckets info team/x").exit_code, 3);  // nothing was created
}

TEST_F(BucketsCliTest, CreateExistingFailsUnlessExistOk) {
  CreateBucket("team/data");
  auto r = Run("buckets create team/data");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("xetstore: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--exist-ok"), std::string::npos) << r.err;
  r = Run("buckets create team/data --exist-ok --public");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "bucket hf://buckets/team/data already exists\n");
  // Left as it was: still private.
  r = Run("buckets info team/data --json");
  EXPECT_EQ(nlohmann::json::parse(r.out)["private"], true);
}

TEST_F(BucketsCliTest, ListFiltersByNamespace) {
  CreateBucket("team/a");
  CreateBucket("team/b", /*is_public=*/true);
  CreateBucket("other/c");
  auto r = Run("buckets list team --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonIds(r.out), (std::set<std::string>{"team/a", "team/b"}));
  r = Run("buckets list --json");  // every namespace
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonIds(r.out), (std::set<std::string>{"team/a", "team/b", "other/c"}));
  r = RunAs("", "buckets list team --json");  // anonymous: public only
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonIds(r.out), (std::set<std::string>{"team/b"}));

  r = Run("buckets list team");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream table(r.out);
  std::string header, row_a, row_b, extra;
  std::getline(table, header);
  std::getline(table, row_a);
  std::getline(table, row_b);
  EXPECT_FALSE(std::getline(table, extra));
  EXPECT_EQ(header.rfind("BUCKET", 0), 0u) << header;
  EXPECT_EQ(row_a.rfind("team/a ", 0), 0u) << row_a;
  EXPECT_NE(row_a.find(" private "), std::string::npos) << row_a;
  EXPECT_EQ(row_b.rfind("team/b ", 0), 0u) << row_b;
  EXPECT_NE(row_b.find(" public "), std::string::npos) << row_b;

  r = Run("buckets list nobody");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  r = Run("buckets list 'bad name'");
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(BucketsCliTest, InfoShowsCountsAndHumanSizes) {
  CreateBucket("team/data");
  const std::string dir = LocalDir("info");
  testing::WriteLocalFile(dir + "/a.bin", std::string(3000, 'a'));
  ASSERT_EQ(Run("cp -q " + dir + "/a.bin hf://buckets/team/data/a.bin").exit_code, 0);
  auto r = Run("buckets info team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("bucket:  team/data\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("access:  private\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("files:   1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("size:    3000\n"), std::string::npos) << r.out;
  r = Run("buckets info -h team/data");
  EXPECT_NE(r.out.find("size:    2.93 KiB\n"), std::string::npos) << r.out;  // 3000/1024
}

TEST_F(BucketsCliTest, DeleteNeedsYes) {
  CreateBucket("team/data");
  auto r = Run("buckets delete team/data");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("xetstore: error: refusing to delete bucket team/data without --yes\n", 0),
            0u)
      << r.err;
  EXPECT_EQ(Run("buckets info team/data").exit_code, 0);  // still there
  r = Run("buckets delete team/data --yes");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "deleted bucket hf://buckets/team/data\n");
  EXPECT_EQ(Run("buckets info team/data").exit_code, 3);
  r = Run("buckets delete team/data --yes");
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(BucketsCliTest, MoveRenamesWithFiles) {
  CreateBucket("team/old");
  CreateBucket("team/taken");
  const std::string dir = LocalDir("move");
  testing::WriteLocalFile(dir + "/f.txt", "hello");
  ASSERT_EQ(Run("cp -q " + dir + "/f.txt hf://buckets/team/old/").exit_code, 0);
  auto r = Run("buckets move team/old team/new");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "moved bucket hf://buckets/team/old to hf://buckets/team/new\n");
  EXPECT_EQ(Run("buckets info team/old").exit_code, 3);
  r = Run("ls hf://buckets/team/new --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["path"], "f.txt");
  r = Run("buckets move team/new team/taken");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("xetstore: error: "), std::string::npos);
  r = Run("buckets move team/missing team/other");
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(BucketsCliTest, BadNamesAreUsageErrors) {
  for (const std::string bad :
       {"noslash", "team/a/b", "team/.hidden", "hf://models/x/y", "hf://buckets/team/b/path"}) {
    const auto r = Run("buckets info '" + bad + "'");
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(r.err.rfind("xetstore: error: ", 0), 0u) << r.err;
  }
}

TEST_F(BucketsCliTest, PermissionErrors) {
  CreateBucket("team/data");
  const std::string reader = server().CreateToken("read", "team/data");
  auto r = RunAs(reader, "buckets create team/new");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("hint: "), std::string::npos) << r.err;
  r = RunAs(reader, "buckets delete team/data --yes");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  r = RunAs("hf_" + std::string(40, '0'), "buckets info team/data");  // unknown token: 401
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("--token"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace xet
