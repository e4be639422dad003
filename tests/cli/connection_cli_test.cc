// How client commands find their server and token (--endpoint/--token, XETSTORE_*, HF_*),
// and what they do when the server cannot be reached.
#include <gtest/gtest.h>

#include <chrono>

#include "support/cli_fixture.h"

namespace xet {
namespace {

using testing::CliServerTest;
using testing::RunXetstoreEnv;

// An endpoint where nothing listens: a server that was started and killed.
std::string DeadEndpoint() {
  testing::ServerProcess dead(testing::MakeTempDir("dead-server"));
  const std::string url = dead.url();
  dead.Kill();
  return url;
}

class ConnectionCliTest : public CliServerTest {
 protected:
  void SetUp() override {
    CliServerTest::SetUp();
    CreateBucket("team/data");
    reader_ = server().CreateToken("read", "team/data");
  }
  std::string reader_;
};

TEST_F(ConnectionCliTest, FlagsWinOverEnvironment) {
  const std::string dead = DeadEndpoint();
  // Flags after the command, and before it (global options).
  auto r =
      RunXetstoreEnv("XETSTORE_ENDPOINT=" + dead + " XETSTORE_TOKEN=" + reader_,
                     "buckets create team/new --endpoint " + url() + " --token " + admin_token());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunXetstoreEnv("XETSTORE_ENDPOINT=" + dead, "--endpoint " + url() + " --token " +
                                                      admin_token() + " buckets info team/new");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ConnectionCliTest, XetstoreVariablesWinOverHfVariables) {
  const std::string dead = DeadEndpoint();
  // XETSTORE_ENDPOINT over HF_ENDPOINT.
  auto r = RunXetstoreEnv(
      "XETSTORE_ENDPOINT=" + url() + " HF_ENDPOINT=" + dead + " XETSTORE_TOKEN=" + admin_token(),
      "buckets info team/data --retries 0");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // HF_ENDPOINT and HF_TOKEN alone.
  r = RunXetstoreEnv("HF_ENDPOINT=" + url() + " HF_TOKEN=" + admin_token(),
                     "buckets info team/data");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // XETSTORE_TOKEN over HF_TOKEN: the read token cannot create.
  r = RunXetstoreEnv(
      "HF_ENDPOINT=" + url() + " HF_TOKEN=" + admin_token() + " XETSTORE_TOKEN=" + reader_,
      "buckets create team/x");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  // No token at all: anonymous, so the private bucket asks for one.
  r = RunXetstoreEnv("XETSTORE_ENDPOINT=" + url(), "buckets info team/data");
  EXPECT_EQ(r.exit_code, 4) << r.err;
}

TEST(ConnectionCli, UnreachableServerFailsAfterRetries) {
  const std::string dead = DeadEndpoint();
  const auto start = std::chrono::steady_clock::now();
  const auto r =
      RunXetstoreEnv("XETSTORE_ENDPOINT=" + dead, "ls hf://buckets/team/data --retries 2");
  EXPECT_EQ(r.exit_code, 5);
  // One error line naming the server, one hint line naming the endpoint.
  EXPECT_EQ(r.err.rfind("xetstore: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("\nhint: is `xetstore serve` running at " + dead + "?"), std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));

  // Every client command maps it the same way.
  for (const std::string cmd :
       {"buckets list", "buckets info a/b", "buckets create a/b", "buckets delete a/b --yes",
        "buckets move a/b a/c", "rm hf://buckets/a/b/c", "cp hf://buckets/a/b/c hf://buckets/a/b/d",
        "cp - hf://buckets/a/b/c </dev/null"}) {
    const auto c = RunXetstoreEnv("XETSTORE_ENDPOINT=" + dead, cmd + " --retries 0");
    EXPECT_EQ(c.exit_code, 5) << cmd << ": " << c.err;
  }
}

TEST(ConnectionCli, DefaultEndpointIsLocalhost8080) {
  const auto r = RunXetstoreEnv("", "buckets list --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("http://127.0.0.1:8080"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace xet
