// Revoking a user token with `xetstore token revoke` (another process, on the server's
// index) stops the CAS tokens minted from it on a running server within the revocation
// refresh interval (--revocation-refresh-s 1 here), while CAS tokens of other user tokens
// keep working.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "support/curl_client.h"
#include "support/server_process.h"
#include "support/subprocess.h"

namespace xet {
namespace {

using nlohmann::json;
using testing::Bearer;
using testing::Fetch;
using testing::ServerProcess;

constexpr int kRefreshSeconds = 1;

struct UserToken {
  std::string id;
  std::string secret;
};

UserToken CreateReadToken(const ServerProcess& server, const std::string& scope) {
  const auto r =
      testing::RunXetstore("token --data-dir " + server.data_dir() +
                           " create --name rev --permission read --scope " + scope + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out, nullptr, false);
  if (!j.is_object()) return {};
  return {j.value("id", ""), j.value("token", "")};
}

class TokenRevocationServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(
        testing::MakeTempDir("revocation"),
        std::vector<std::string>{"--revocation-refresh-s", std::to_string(kRefreshSeconds)});
    const auto created = Fetch("POST", server_->url() + "/api/buckets/ns/priv",
                               {Bearer(server_->AdminToken()), "Content-Type: application/json"},
                               json{{"private", true}}.dump());
    ASSERT_EQ(created.status, 200) << created.body;
  }

  // The bucket's CAS read token, fetched with the user token `secret`.
  std::string CasReadToken(const std::string& secret) {
    const auto r =
        Fetch("GET", server_->url() + "/api/buckets/ns/priv/xet-read-token", {Bearer(secret)});
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false).value("accessToken", "");
  }

  // A CAS request with `cas`: 404 (unknown file) when the token is accepted, 401 when not.
  long CasStatus(const std::string& cas) {
    return Fetch("GET", server_->url() + "/v1/reconstructions/" + std::string(64, 'a'),
                 {Bearer(cas)})
        .status;
  }

  std::unique_ptr<ServerProcess> server_;
};

TEST_F(TokenRevocationServerTest, RevokedUserTokensCasTokenIsRefusedWithinTheInterval) {
  const UserToken user = CreateReadToken(*server_, "ns/priv");
  const UserToken other = CreateReadToken(*server_, "ns/priv");
  ASSERT_TRUE(user.id.starts_with("tok_")) << user.id;
  const std::string cas = CasReadToken(user.secret);
  const std::string other_cas = CasReadToken(other.secret);
  ASSERT_TRUE(cas.starts_with("xet_")) << cas;
  ASSERT_EQ(CasStatus(cas), 404);
  ASSERT_EQ(CasStatus(other_cas), 404);

  const auto revoked =
      testing::RunXetstore("token --data-dir " + server_->data_dir() + " revoke " + user.id);
  ASSERT_EQ(revoked.exit_code, 0) << revoked.err;
  const auto start = std::chrono::steady_clock::now();
  // The user token is checked against the index per request: refused at once.
  EXPECT_EQ(
      Fetch("GET", server_->url() + "/api/buckets/ns/priv/xet-read-token", {Bearer(user.secret)})
          .status,
      401);

  // Its CAS token is refused once the server's revocation list is refreshed: within the
  // interval (plus a second of slack for scheduling on a loaded machine). Bounded polling.
  const auto limit = std::chrono::seconds(kRefreshSeconds + 1);
  long status = 0;
  auto waited = std::chrono::steady_clock::duration::zero();
  while (waited <= limit + std::chrono::seconds(3)) {
    status = CasStatus(cas);
    waited = std::chrono::steady_clock::now() - start;
    if (status == 401) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(status, 401);
  ::testing::Test::RecordProperty(
      "refused_after_ms",
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()));
  EXPECT_LE(waited, limit) << "refused after "
                           << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
                           << " ms";
  // The other user token's CAS token still works.
  EXPECT_EQ(CasStatus(other_cas), 404);
}

}  // namespace
}  // namespace xet
