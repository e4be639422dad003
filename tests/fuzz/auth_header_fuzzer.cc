// libFuzzer target: the Authorization header and the tokens in it (server/auth/token_service.h),
// over an Index in a temporary directory that holds one user token.
//
// Input: "FIELDS\nREST": FIELDS = "TOKEN_ID SCOPE EXPIRES PERMISSION" (space separated)
// of a CAS token to mint; REST is used as a raw Authorization header and as edits (three
// bytes each: little-endian position, new byte) applied to "Bearer <minted token>".
// Properties:
//   - Authenticate never crashes; a failure is Unauthenticated with a message;
//   - a raw header authenticates only as the stored user token (its exact secret) or as
//     a CAS token whose payload this server signed;
//   - a minted CAS token authenticates before its expiry, as its id, scope and permission
//     (admin capped to write), and not from its expiry on;
//   - an edited minted token that authenticates kept the signed payload unchanged (the
//     MAC binds it) and yields the same principal;
//   - heap growth stays linear in the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "protocol/bucket_path.h"
#include "server/auth/crypto_util.h"
#include "server/auth/token_service.h"
#include "store/sqlite/sqlite_index.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("auth_header_fuzzer");

constexpr int64_t kNow = 1'700'000'000;
constexpr std::string_view kSecret = "auth-header-fuzzer-secret-0123456789abcdef";

// A token service over an index holding one user token, in a temporary directory.
class Tokens {
 public:
  Tokens() {
    char tmpl[] = "/tmp/xetstore-auth-fuzz-XXXXXX";
    Check(mkdtemp(tmpl) != nullptr, "mkdtemp");
    dir_ = tmpl;
    index_ = std::move(xet::SqliteIndex::Open(dir_ + "/index.db", {}).value());
    service_ = std::make_unique<xet::TokenService>(*index_, xet::AsBytes(kSecret),
                                                   [this] { return now_; });
    auto user = service_->CreateUserToken("fuzz", xet::Permission::kRead, {"ns/a"});
    Check(user.ok(), "CreateUserToken");
    user_secret_ = user->secret;
  }
  ~Tokens() {
    service_.reset();
    index_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  xet::TokenService& service() { return *service_; }
  const std::string& user_secret() const { return user_secret_; }
  void set_now(int64_t now) { now_ = now; }

 private:
  std::string dir_;
  std::unique_ptr<xet::SqliteIndex> index_;
  std::unique_ptr<xet::TokenService> service_;
  std::string user_secret_;
  int64_t now_ = kNow;
};

Tokens& TheTokens() {
  static Tokens tokens;
  return tokens;
}

xet::Result<xet::Principal> Authenticate(std::string_view header) {
  auto p = TheTokens().service().Authenticate(header);
  if (!p.ok()) {
    Check.Refusal(p.status(), xet::Status::Code::kUnauthenticated);
  }
  return p;
}

std::string_view TokenOf(std::string_view header) {
  const size_t sp = header.find(' ');
  std::string_view t = sp == std::string_view::npos ? header : header.substr(sp + 1);
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  return t;
}

// The signed payload of a CAS token: between "xet_" and the first '.'.
std::string_view PayloadOf(std::string_view token) {
  token.remove_prefix(std::min<size_t>(4, token.size()));
  return token.substr(0, token.find('.'));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Tokens& tokens = TheTokens();
  tokens.set_now(kNow);
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;
  const size_t nl = input.find('\n');
  const std::string_view rest = nl == std::string_view::npos ? input : input.substr(nl + 1);

  if (auto p = Authenticate(rest); p.ok()) {
    const std::string_view token = TokenOf(rest);
    Check(token == tokens.user_secret() || token.starts_with("xet_"),
          "authenticated as neither the user token nor a CAS token");
  }

  if (nl != std::string_view::npos) {
    std::istringstream fields{std::string(input.substr(0, nl))};
    std::string id, scope, perm_name;
    int64_t expires = 0;
    // Ids and scopes are what MintCasToken's callers pass: a token record's id ("tok_" + 12
    // hex digits) and a validated bucket id (NS/NAME, at most 193 bytes), so short printable
    // ASCII. (Longer ones make tokens over the 8 KiB Authenticate accepts.)
    const auto fits = [](const std::string& s, size_t max) {
      return s.size() <= max &&
             std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7F; });
    };
    if (fields >> id >> scope >> expires >> perm_name && fits(id, 64) &&
        fits(scope, 2 * xet::kMaxBucketNameBytes + 1)) {
      const auto perm = xet::ParsePermission(perm_name);
      if (perm) {
        const std::string token = tokens.service().MintCasToken(id, *perm, scope, expires);
        const std::string header = "Bearer " + token;
        auto p = Authenticate(header);
        Check(p.ok() == (expires > kNow), "a minted token fails before, or works after, expiry");
        if (p.ok()) {
          Check(p->token_id == id && p->scopes == std::vector<xet::Scope>{scope},
                "principal differs from the minted token");
          Check(
              p->permission == (*perm == xet::Permission::kAdmin ? xet::Permission::kWrite : *perm),
              "permission differs");
          tokens.set_now(expires);
          Check(!Authenticate(header).ok(), "a minted token works at its expiry");
          tokens.set_now(kNow);

          std::string edited = header;
          for (size_t i = 0; i + 2 < rest.size(); i += 3) {
            const size_t at = static_cast<uint8_t>(rest[i]) | static_cast<uint8_t>(rest[i + 1])
                                                                  << 8;
            edited[at % edited.size()] = rest[i + 2];
          }
          if (auto q = Authenticate(edited); q.ok()) {
            Check(PayloadOf(TokenOf(edited)) == PayloadOf(token), "an edited payload verified");
            Check(q->token_id == p->token_id && q->scopes == p->scopes &&
                      q->permission == p->permission,
                  "an edited token changed the principal");
          }
        }
      }
    }
  }
  heap.Check("auth_header_fuzzer", size, 64, 1 << 20);
  return 0;
}
