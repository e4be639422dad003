// `xetstore serve --index postgres://...`: two nodes sharing one PostgreSQL index (a real
// server started by the test, tests/support/postgres_test_server.h), one object directory
// and one signing secret. What one node writes, the other lists, serves and deletes; a
// token created in the index is honoured by both.
#include <gtest/gtest.h>

#include <string>

#include "support/cli_fixture.h"
#include "support/postgres_test_server.h"
#include "support/server_process.h"

namespace xet::testing {
namespace {

CommandResult RunOn(const ServerProcess& node, const std::string& token, const std::string& args) {
  return RunXetstoreEnv("XETSTORE_ENDPOINT=" + node.url() + " XETSTORE_TOKEN=" + token, args);
}

TEST(PostgresServeCli, TwoNodesShareOneIndex) {
  PostgresTestServer& pg = PostgresTestServer::Shared();
  ASSERT_TRUE(pg.started());
  const std::string shared = MakeTempDir("pg-nodes");
  const std::string db = "cli_two_nodes_" + std::to_string(::getpid());
  ASSERT_EQ(pg.CreateDatabase(db), "");
  const std::vector<std::string> args = {"--index",           pg.Url(db),      "--objects",
                                         shared + "/objects", "--secret-file", shared + "/secret"};
  ServerProcess one(MakeTempDir("pg-node-one"), args);
  ServerProcess two(MakeTempDir("pg-node-two"), args);
  const std::string admin = one.AdminToken();  // the first start wrote it into the index
  ASSERT_FALSE(admin.empty());

  const std::string local = MakeTempDir("pg-local");
  const std::string data = RandomString(3 << 20, 7);
  WriteLocalFile(local + "/in.bin", data);
  CommandResult r = RunOn(one, admin, "buckets create ns/shared");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunOn(one, admin, "cp " + local + "/in.bin hf://buckets/ns/shared/dir/in.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = RunOn(two, admin, "ls -R hf://buckets/ns/shared");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dir/in.bin"), std::string::npos) << r.out;
  r = RunOn(two, admin, "cp hf://buckets/ns/shared/dir/in.bin " + local + "/out.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(ReadLocalFile(local + "/out.bin") == data);

  // A token created in the shared index (no node involved) works on every node.
  r = RunXetstore("token --index '" + pg.Url(db) +
                  "' create --name reader --permission read --scope ns/shared");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string reader = r.out;
  while (!reader.empty() && reader.back() == '\n') reader.pop_back();
  r = RunOn(two, reader, "ls -R hf://buckets/ns/shared");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dir/in.bin"), std::string::npos) << r.out;
  EXPECT_NE(RunOn(one, reader, "rm hf://buckets/ns/shared/dir/in.bin").exit_code, 0);

  r = RunOn(two, admin, "rm hf://buckets/ns/shared/dir/in.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunOn(one, admin, "ls -R hf://buckets/ns/shared");
  EXPECT_EQ(r.out.find("in.bin"), std::string::npos) << r.out;
}

TEST(PostgresServeCli, AnUnreachableDatabaseStopsTheServerWithOneLine) {
  const std::string dir = MakeTempDir("pg-unreachable");
  CommandResult r = RunXetstore("serve --listen 127.0.0.1:0 --data-dir " + dir +
                                " --index 'postgresql:///none?host=/nonexistent&port=1'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("postgres"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace xet::testing
