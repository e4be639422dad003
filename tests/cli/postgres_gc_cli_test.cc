// `xetstore gc` and `xetstore fsck` on two serve nodes sharing one PostgreSQL index (a real
// server started by the test) and one object directory, with the storage flags of serve:
// each node uploads a file, both are removed through the other node, gc frees them, and
// what a node uploads after gc downloads intact from the other.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_fixture.h"
#include "support/postgres_test_server.h"
#include "support/server_process.h"

namespace xet::testing {
namespace {

CommandResult RunOn(const ServerProcess& node, const std::string& token, const std::string& args) {
  return RunXetstoreEnv("XETSTORE_ENDPOINT=" + node.url() + " XETSTORE_TOKEN=" + token, args);
}

TEST(PostgresGcCli, GcAndFsckOnASharedIndex) {
  PostgresTestServer& pg = PostgresTestServer::Shared();
  ASSERT_TRUE(pg.started());
  const std::string shared = MakeTempDir("pg-gc");
  const std::string db = "cli_gc_" + std::to_string(::getpid());
  ASSERT_EQ(pg.CreateDatabase(db), "");
  const std::string storage = "--index '" + pg.Url(db) + "' --objects " + shared + "/objects";
  const std::vector<std::string> args = {"--index",           pg.Url(db),      "--objects",
                                         shared + "/objects", "--secret-file", shared + "/secret"};
  ServerProcess one(MakeTempDir("pg-gc-one"), args);
  ServerProcess two(MakeTempDir("pg-gc-two"), args);
  const std::string admin = one.AdminToken();
  ASSERT_FALSE(admin.empty());
  ASSERT_EQ(RunOn(one, admin, "buckets create ns/b").exit_code, 0);

  const std::string local = MakeTempDir("pg-gc-local");
  for (int i = 0; i < 4; ++i) {
    WriteLocalFile(local + "/f" + std::to_string(i), RandomString(150'000, 30 + i));
    const auto r = RunOn(
        i % 2 == 0 ? one : two, admin,
        "cp -q " + local + "/f" + std::to_string(i) + " hf://buckets/ns/b/f" + std::to_string(i));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  ASSERT_EQ(RunOn(two, admin, "rm hf://buckets/ns/b/f0").exit_code, 0);
  ASSERT_EQ(RunOn(one, admin, "rm hf://buckets/ns/b/f1").exit_code, 0);

  CommandResult r = RunXetstore("gc --grace 0 --json " + storage);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["xorbs"]["scanned"], 4);
  EXPECT_EQ(j["xorbs"]["freed"], 2);
  EXPECT_EQ(j["files"]["freed"], 2);
  EXPECT_EQ(j["shards"]["freed"], 2);
  r = RunXetstore("fsck --deep " + storage);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;

  // The kept files download from either node; a removed one uploads again through the
  // other node and downloads intact.
  r = RunOn(two, admin, "cp -q hf://buckets/ns/b/f2 " + local + "/out2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadLocalFile(local + "/out2"), ReadLocalFile(local + "/f2"));
  r = RunOn(two, admin, "cp -q " + local + "/f0 hf://buckets/ns/b/again");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunOn(one, admin, "cp -q hf://buckets/ns/b/again " + local + "/out0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadLocalFile(local + "/out0"), ReadLocalFile(local + "/f0"));
}

}  // namespace
}  // namespace xet::testing
