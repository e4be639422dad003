// CAS tokens: accepted only exactly as minted, and refused once the user token they were
// minted for is revoked or expires, within the revocation refresh interval and without an
// Index read per check. A real SQLite index; time is an injected clock.
#include "server/auth/token_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "server/auth/revocation_list.h"
#include "support/temp_dir.h"

namespace xet {
namespace {

constexpr int64_t kRefresh = 10;
constexpr int64_t kStart = 1'700'000'000;

class TokenServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index = OpenSqliteIndex(dir_.path() + "/index.sqlite");
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    index_ = std::move(*index);
    tokens_ = std::make_unique<TokenService>(
        *index_, secret_, [this] { return now_.load(); }, kRefresh);
  }

  // A read token for ns/b and a CAS token minted from it, valid for an hour.
  std::pair<NewUserToken, std::string> UserAndCasToken(int64_t user_expires_at = 0) {
    auto user = tokens_->CreateUserToken("t", Permission::kRead, {"ns/b"}, user_expires_at);
    EXPECT_TRUE(user.ok()) << user.status().ToString();
    std::string cas =
        tokens_->MintCasToken(user->record.id, Permission::kRead, "ns/b", now_.load() + 3600);
    return {*user, cas};
  }

  Status Check(const std::string& token) { return tokens_->AuthenticateToken(token).status(); }

  testing::TempDir dir_;
  std::vector<uint8_t> secret_ = std::vector<uint8_t>(32, 7);
  std::atomic<int64_t> now_{kStart};
  std::unique_ptr<Index> index_;
  std::unique_ptr<TokenService> tokens_;
};

class TokenRevocationTest : public TokenServiceTest {};
class CasTokenTest : public TokenServiceTest {};

TEST_F(CasTokenTest, EveryOneCharacterChangeIsRefused) {
  auto user = tokens_->CreateUserToken("w", Permission::kWrite, {"ns/b"}, 0);
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";
  // Every position of one token; the end of the MAC (where base64 has unused bits) of several
  // more, so that MACs ending in many different characters are covered.
  for (int i = 0; i < 32; ++i) {
    const std::string cas =
        tokens_->MintCasToken(user->record.id, Permission::kWrite, "ns/b", kStart + 3600 + i);
    ASSERT_TRUE(Check(cas).ok()) << cas;
    for (size_t pos = i == 0 ? 0 : cas.size() - 3; pos < cas.size(); ++pos) {
      for (char c : alphabet) {
        if (c == cas[pos]) continue;
        std::string changed = cas;
        changed[pos] = c;
        EXPECT_FALSE(Check(changed).ok()) << cas << " -> " << changed;
      }
    }
    EXPECT_FALSE(Check(cas + "A").ok());
    EXPECT_FALSE(Check(cas.substr(0, cas.size() - 1)).ok());
  }
}

TEST_F(TokenRevocationTest, RevokedUserTokenStopsItsCasTokensAfterTheRefresh) {
  auto [user, cas] = UserAndCasToken();
  auto [other, other_cas] = UserAndCasToken();
  ASSERT_TRUE(Check(cas).ok()) << Check(cas).ToString();  // loads the list at kStart
  ASSERT_TRUE(index_->RevokeToken(user.record.id).ok());

  // The user token itself is looked up per request: refused at once.
  EXPECT_EQ(Check(user.secret).code(), Status::Code::kUnauthenticated);
  // Its CAS token runs on the cached list until the list is refreshed.
  now_ = kStart + kRefresh - 1;
  EXPECT_TRUE(Check(cas).ok()) << Check(cas).ToString();
  now_ = kStart + kRefresh;
  const Status refused = Check(cas);
  EXPECT_EQ(refused.code(), Status::Code::kUnauthenticated);
  EXPECT_NE(refused.message().find("revoked"), std::string::npos) << refused.ToString();
  // Another user token's CAS token is unaffected.
  EXPECT_TRUE(Check(other_cas).ok()) << Check(other_cas).ToString();
}

TEST_F(TokenRevocationTest, ExpiredUserTokenStopsItsCasTokens) {
  auto [user, cas] = UserAndCasToken(kStart + 5);  // the CAS token outlives it by an hour
  ASSERT_TRUE(Check(cas).ok());
  now_ = kStart + 5;  // the list loaded at kStart already knows the expiry
  EXPECT_EQ(Check(cas).code(), Status::Code::kUnauthenticated);
}

TEST_F(TokenRevocationTest, RevocationIsReadFromTheIndexOncePerInterval) {
  auto [user, cas] = UserAndCasToken();
  RevocationList list(*index_, kRefresh, [this] { return now_.load(); });
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(list.IsRevokedOrExpired(user.record.id));
  EXPECT_EQ(list.loads(), 1u);
  ASSERT_TRUE(index_->RevokeToken(user.record.id).ok());
  now_ = kStart + kRefresh - 1;
  EXPECT_FALSE(list.IsRevokedOrExpired(user.record.id));
  EXPECT_EQ(list.loads(), 1u);
  now_ = kStart + kRefresh;
  EXPECT_TRUE(list.IsRevokedOrExpired(user.record.id));
  EXPECT_EQ(list.loads(), 2u);
  EXPECT_FALSE(list.IsRevokedOrExpired("tok_unknown"));  // not refused: its MAC was checked
}

TEST_F(TokenRevocationTest, ConcurrentChecksShareOneReload) {
  auto [user, cas] = UserAndCasToken();
  RevocationList list(*index_, kRefresh, [this] { return now_.load(); });
  ASSERT_TRUE(index_->RevokeToken(user.record.id).ok());
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  const std::string& id = user.record.id;  // (lambdas cannot capture a structured binding)
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) refused += list.IsRevokedOrExpired(id) ? 1 : 0;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(refused.load(), 8 * 200);
  EXPECT_EQ(list.loads(), 1u);
}

TEST_F(TokenRevocationTest, ZeroIntervalReloadsOnEveryCheck) {
  auto [user, cas] = UserAndCasToken();
  RevocationList list(*index_, 0, [this] { return now_.load(); });
  EXPECT_FALSE(list.IsRevokedOrExpired(user.record.id));
  ASSERT_TRUE(index_->RevokeToken(user.record.id).ok());
  EXPECT_TRUE(list.IsRevokedOrExpired(user.record.id));
  EXPECT_EQ(list.loads(), 2u);
}

}  // namespace
}  // namespace xet
